import { defaultTransport } from '#default-transport'
import { sizeOf } from '../core/body.ts'
import { onAbort } from '../core/callback.ts'
import { NetworkError, UploadAbortedError } from '../core/errors.ts'
import type { HttpRequest, HttpResponse } from '../core/http.ts'
import { abortCancels, isHeld, type UploadRun } from '../core/run.ts'
import { origin } from './transport.ts'

/**
 * One exchange through the transport, settled by the engine whatever the transport does: a
 * `NetworkError` when nothing moves (no byte out or in) for `stallTimeout` ms, an
 * `UploadAbortedError` as soon as `signal` aborts (unless the upload is committing), the hold's
 * reason when `held` aborts (the upload paused) before its body's last byte has left. Either
 * way the transport's request is cancelled, and its bytes stop counting. A body wholly sent is
 * storage's to accept: a pause then lets its reply come (else a part storage stored would be sent
 * again on resume), as the single PUT's commit rule does.
 */
export function exchange(
  run: UploadRun,
  request: HttpRequest,
  signal: AbortSignal | undefined,
  held?: AbortSignal,
  to: 'api' | 'storage' = 'storage',
): Promise<HttpResponse> {
  // Says whom a request without a reply went to, so a page can name what it cannot reach.
  const lost = (error: unknown) => (
    error instanceof NetworkError && Object.assign(error, { to, origin: origin(request.url) }), error
  )
  const controller = new AbortController()
  let timer: ReturnType<typeof setTimeout>
  let fail: (error: Error, linger?: boolean) => void
  // Progress only stamps the time (transports report every chunk): one timer, which on firing
  // waits out whatever is left of the stall timeout since the last byte moved.
  const { stallTimeout, transport = defaultTransport() } = run.options
  let moved: number
  const watch = () => {
    const left = moved + stallTimeout - Date.now()
    if (left > 0) timer = setTimeout(watch, left)
    else
      fail(
        lost(
          new NetworkError(`No progress for ${stallTimeout} ms on ${request.method} ${origin(request.url)}`),
        ) as Error,
      )
  }
  const { body } = request
  let sent = -1
  let stops: Array<() => void>
  return new Promise<HttpResponse>((resolve, reject) => {
    fail = (error, linger) => {
      reject(error)
      if (!linger) controller.abort()
    }
    stops = [
      // The caller's abort (or a sibling part's failure) settles the request at once; a body
      // wholly sent is storage's to store, so its request stays open for its reply, which the
      // upload's cleanup waits for before AbortMultipartUpload (flow/put.ts).
      onAbort(
        signal,
        () =>
          abortCancels(run, signal) &&
          fail(new UploadAbortedError(), typeof body === 'object' && sent === sizeOf(body as Blob)),
      ),
      onAbort(held, () => isHeld(run, held) && sent < sizeOf(body as Blob) && fail(held!.reason)),
    ]
    // The watchdog starts once a connection is ours: a wait for one is no stall.
    connection(request.url, transport.connections ?? 6, (release) => {
      if (controller.signal.aborted) return release()
      moved = Date.now()
      watch()
      // Open until the transport settles, the watchdog running till then (a lingering body included).
      const open = transport({
        ...request,
        signal: controller.signal,
        onProgress: (bytes) => {
          // Bytes of a cancelled request no longer count (a pause has just reset them to 0).
          if (controller.signal.aborted) return
          moved = Date.now()
          request.onProgress?.((sent = bytes))
        },
      })
        .then(resolve, (error) => reject(lost(error)))
        .finally(() => {
          clearTimeout(timer)
          release()
          run.open.delete(open)
        })
      run.open.add(open)
    })
  }).finally(() => {
    for (const stop of stops) stop()
  })
}

/** Per origin: the requests waiting for one of the transport's connections, and how many are in flight (`busy`). */
const origins: Record<string, Array<() => void> & { busy?: number }> = {}

/**
 * Calls `start` when a request to `url` may go out without waiting inside the runtime for a
 * connection (at most `limit` in flight per origin, in the order asked), with the function that
 * hands its connection on. The page's own fetches to the origin are not counted: they may still
 * take a connection first, which only delays a request whose watchdog has not started.
 */
function connection(url: string, limit: number, start: (release: () => void) => void): void {
  // Unlimited, all share one entry (and a relative URL outside a browser reaches the transport, which says what to set).
  const waiting = (origins[limit < 1 / 0 ? origin(url) : ''] ||= [])
  const go = () => {
    waiting.busy = -~waiting.busy!
    start(() => {
      waiting.busy!--
      waiting.shift()?.()
    })
  }
  waiting.busy! >= limit ? waiting.push(go) : go()
}
