import { S3Error, UploadAbortedError, UploadError, missingETag } from './errors.ts'
import type { ResolvedOptions } from './options.ts'
import { type PartPlan, partRange } from './parts.ts'
import { runPool } from './queue.ts'
import { withRetries } from './retry.ts'
import { throwIfS3Error } from './s3.ts'
import type { HttpResponse } from './transport.ts'

export interface UploadResult {
  /** The object's URL, without any signature. */
  url: string
  bucket: string
  key: string
  /** As storage reported it; empty when the store sends none (RGW's CompleteMultipartUpload). */
  etag: string
}

/** A request ready to send: signed headers (token mode) or a presigned URL. */
export interface SignedRequest {
  method: string
  url: string
  headers?: Record<string, string>
}

/** A multipart upload that storage has already created, and how to sign its steps. */
export interface MultipartUpload {
  plan: PartPlan
  /** `renew` after storage refused the last URL for this part (see `partUrlsExpire`). */
  signPart(partNumber: number, renew: boolean): Promise<SignedRequest>
  /** Parts go to presigned URLs that can expire before use: a 403 on one is worth one renewal. */
  partUrlsExpire?: boolean
  complete(etags: string[], signal?: AbortSignal): Promise<UploadResult>
  /** Best-effort cleanup; called without the (already aborted) signal. */
  abort(): Promise<void>
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

/** One PutObject. */
export async function putSingle(
  file: Blob,
  sign: () => Promise<SignedRequest>,
  result: (etag: string) => UploadResult,
  options: ResolvedOptions,
): Promise<UploadResult> {
  const progress = trackProgress(file.size, options.onProgress)
  const put = () => send(options, sign, { body: file, signal: options.signal, onSent: (bytes) => progress.sent(1, bytes) })
  const response = await (options.queue ? options.queue.run(put, options.signal) : put())
  progress.finished(1, file.size)
  return result(response.header('ETag') ?? '')
}

/** Parts in parallel, then Complete; on any failure or abort, AbortMultipartUpload. */
export async function putMultipart(file: Blob, upload: MultipartUpload, options: ResolvedOptions): Promise<UploadResult> {
  const { plan } = upload
  const progress = trackProgress(plan.size, options.onProgress)
  // One failed part cancels its siblings through this controller, as the caller's abort does.
  const controller = new AbortController()
  const { signal } = controller
  const cancel = () => controller.abort()
  options.signal?.addEventListener('abort', cancel)
  const etags: string[] = []

  const uploadPart = async (partNumber: number) => {
    const [start, end] = partRange(plan, partNumber)
    const sign = (renew: boolean) => upload.signPart(partNumber, renew)
    const response = await send(options, sign, {
      body: file.slice(start, end),
      signal,
      onSent: (bytes) => progress.sent(partNumber, bytes),
      renewable: upload.partUrlsExpire,
    })
    const etag = response.header('ETag')
    if (!etag) throw missingETag(partNumber)
    etags[partNumber - 1] = etag
    progress.finished(partNumber, end - start)
  }

  try {
    if (options.signal?.aborted) throw new UploadAbortedError()
    const { queue } = options
    await runPool(plan.count, options.queueSize, (n) => (queue ? queue.run(() => uploadPart(n), signal) : uploadPart(n)))
    const uploaded = etags.filter(Boolean).length
    if (uploaded !== plan.count) {
      throw new UploadError(`Uploaded ${uploaded} parts but the plan has ${plan.count}`)
    }
    return await upload.complete(etags, signal)
  } catch (error) {
    controller.abort()
    if (!options.leavePartsOnError) await upload.abort().catch(() => {})
    throw options.signal?.aborted ? new UploadAbortedError() : error
  } finally {
    options.signal?.removeEventListener('abort', cancel)
  }
}

/**
 * Sums bytes in flight per part and reports the running total, only upwards: a part that is
 * retried starts again from 0 without the total going back or counting twice.
 */
function trackProgress(total: number, onProgress?: (progress: { loaded: number; total: number }) => void) {
  let finished = 0
  let reported = -1
  const inFlight = new Map<number, number>()
  const report = () => {
    let loaded = finished
    for (const bytes of inFlight.values()) loaded += bytes
    if (loaded > reported && onProgress) onProgress({ loaded: Math.min((reported = loaded), total), total })
  }
  return {
    sent(partNumber: number, bytes: number) {
      inFlight.set(partNumber, bytes)
      report()
    },
    finished(partNumber: number, bytes: number) {
      inFlight.delete(partNumber)
      finished += bytes
      report()
    },
  }
}
