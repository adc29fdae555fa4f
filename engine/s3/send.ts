import { S3Error, UploadAbortedError } from '../core/errors.ts'
import type { HttpResponse } from '../core/http.ts'
import { abortCancels, isHeld, type UploadRun } from '../core/run.ts'
import type { SignedRequest } from '../core/signing.ts'
import { exchange } from '../transport/exchange.ts'
import { isRetryable, withRetries } from '../transport/retry.ts'
import { throwIfS3Error } from './error-reply.ts'

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
      if (signal?.aborted && abortCancels(run, signal)) throw new UploadAbortedError()
      if (isHeld(run, held)) throw held!.reason
      return attempt(error)
    }
  }
  return withRetries(
    run,
    signal,
    () =>
      attempt().catch((error) => {
        if (unknown && endsUpload && (error as S3Error).code === 'NoSuchUpload')
          return { status: 204, header: () => null, body: '' }
        unknown ||= isRetryable(error)
        throw error
      }),
    held,
  )
}
