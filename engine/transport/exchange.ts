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
): Promise<HttpResponse> {
  const controller = new AbortController()
  let timer: ReturnType<typeof setTimeout>
  let fail: (error: Error, linger?: boolean) => void
  // Progress only stamps the time (transports report every chunk): one timer, which on firing
  // waits out whatever is left of the stall timeout since the last byte moved.
  const { stallTimeout, transport = defaultTransport() } = run.options
  let moved = Date.now()
  const watch = () => {
    const left = moved + stallTimeout - Date.now()
    if (left > 0) timer = setTimeout(watch, left)
    else fail(new NetworkError(`No progress for ${stallTimeout} ms on ${request.method} ${origin(request.url)}`))
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
      onAbort(signal, () => abortCancels(run, signal) && fail(new UploadAbortedError(), typeof body === 'object' && sent === sizeOf(body as Blob))),
      onAbort(held, () => isHeld(run, held) && sent < sizeOf(body as Blob) && fail(held!.reason)),
    ]
    if (controller.signal.aborted) return
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
      .then(resolve, reject)
      .finally(() => {
        clearTimeout(timer)
        run.open.delete(open)
      })
    run.open.add(open)
  }).finally(() => {
    for (const stop of stops) stop()
  })
}
