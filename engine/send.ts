import { S3Error } from './errors.ts'
import type { ResolvedOptions } from './options.ts'
import { withRetries } from './retry.ts'
import { throwIfS3Error } from './s3.ts'
import type { HttpResponse } from './transport.ts'

/** A request ready to send: signed headers (token mode) or a presigned URL. */
export interface SignedRequest {
  method: string
  url: string
  headers?: Record<string, string>
}

export interface SendOptions {
  body?: Blob | string
  signal: AbortSignal | undefined
  onSent?: (bytes: number) => void
  /**
   * `sign(true)` yields a fresh presigned URL, so a 403 is answered by renewing it once, outside
   * the retry count. Any 403 counts: S3 says "Request has expired", but Ceph RGW 16.2 answers an
   * expired URL with a bare AccessDenied, and judging expiry by the page's clock would fail exactly
   * when that clock runs behind storage's.
   */
  renewable?: boolean
}

/** Sends one request with retries, signing afresh for every attempt. */
export function send(
  options: ResolvedOptions,
  sign: (renew: boolean) => Promise<SignedRequest>,
  { body, signal, onSent, renewable }: SendOptions,
): Promise<HttpResponse> {
  const attempt = async (renew: boolean): Promise<HttpResponse> => {
    onSent?.(0)
    try {
      return throwIfS3Error(await options.transport({ ...(await sign(renew)), body, signal, onProgress: onSent }))
    } catch (error) {
      if (renew || !renewable || !(error instanceof S3Error && error.status === 403)) throw error
      return attempt(true)
    }
  }
  return withRetries(options.retries, signal, () => attempt(false))
}

