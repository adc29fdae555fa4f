import { NetworkError, S3Error, UploadAbortedError } from '../errors.ts'
import { committing, isRetryable, withRetries } from './retry.ts'
import { throwIfS3Error } from '../s3/xml.ts'
import { type HttpRequest, type HttpResponse, origin } from './transport.ts'
import { isHeld, type UploadRun } from '../run.ts'
import { onAbort } from '../callback.ts'
import { sizeOf } from '../flow/body.ts'

/** A request ready to send: signed headers (token mode) or a presigned URL. */
export interface SignedRequest {
  method: string
  url: string
  headers?: Record<string, string>
}

/**
 * Signs one attempt. `refused` is storage's refusal of the previous attempt (403, ExpiredToken,
 * RequestTimeTooSkewed): a signer that can do something about it (a fresh presigned URL, fresh
 * credentials, the server's clock) signs again; one that cannot throws `refused`.
 */
export type Signer = (refused?: S3Error) => Promise<SignedRequest>

export interface SendOptions {
  body?: Blob | Uint8Array | string
  signal: AbortSignal | undefined
  onSent?: (bytes: number) => void
  /**
   * CreateMultipartUpload, the presigned upload request: an abort does not cancel the attempt in
   * flight (storage may be creating an upload; its reply is needed to clean it up), it only
   * stops further attempts.
   */
  linger?: boolean
  /**
   * CompleteMultipartUpload, AbortMultipartUpload: after an attempt whose outcome is unknown (no
   * reply, 5xx), a NoSuchUpload means that attempt ended the upload, and counts as success.
   */
  endsUpload?: boolean
  /** A body request's hold (see `RunHooks.hold`): its abort stops the request, with its reason. */
  held?: AbortSignal
}

/**
 * Storage refused the request as signed, or as addressed (PermanentRedirect,
 * AuthorizationHeaderMalformed: another region); signing again may help, once.
 */
const isRefusal = (error: unknown): error is S3Error =>
  error instanceof S3Error && (error.status === 403 || /Expired|Skewed|Redirect|Malformed/.test(error.code))

/** Sends one request to storage with retries, signing afresh for every attempt. */
export function send(
  run: UploadRun,
  sign: Signer,
  { body, signal, onSent, linger, endsUpload, held }: SendOptions,
): Promise<HttpResponse> {
  let unknown = false
  const attempt = async (refused?: S3Error): Promise<HttpResponse> => {
    onSent?.(0)
    try {
      const request = { ...(await sign(refused)), body, onProgress: onSent }
      return throwIfS3Error(await exchange(run, request, linger ? undefined : signal, held))
    } catch (error) {
      if (refused || !isRefusal(error)) throw error
      // Signing again is a new request: none after an abort (a lingering Create's refusal included).
      if (signal?.aborted && !committing(run, signal)) throw new UploadAbortedError()
      if (isHeld(run, held)) throw held!.reason
      return attempt(error)
    }
  }
  return withRetries(run, signal, () =>
    attempt().catch((error) => {
      if (unknown && endsUpload && (error as S3Error).code === 'NoSuchUpload') return { status: 204, header: () => null, body: '' }
      unknown ||= isRetryable(error)
      throw error
    }),
    held,
  )
}

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
  const { stallTimeout, transport } = run.options
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
      onAbort(signal, () => committing(run, signal) || fail(new UploadAbortedError(), typeof body === 'object' && sent === sizeOf(body as Blob))),
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
