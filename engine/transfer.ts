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
  /** `renew` after storage refused the last request for this part as expired. */
  signPart(partNumber: number, renew: boolean): Promise<SignedRequest>
  complete(etags: string[], signal?: AbortSignal): Promise<UploadResult>
  /** Best-effort cleanup; called without the (already aborted) signal. */
  abort(): Promise<void>
}

/**
 * Sends `body` with retries, signing afresh for every attempt. A request refused as expired is
 * signed once more with `renew` set (a presigned URL that sat too long), outside the retry count.
 */
export function send(
  options: ResolvedOptions,
  sign: (renew: boolean) => Promise<SignedRequest>,
  body: Blob | string | undefined,
  signal: AbortSignal | undefined,
  onSent?: (bytes: number) => void,
): Promise<HttpResponse> {
  const attempt = async (renew: boolean) => {
    onSent?.(0)
    return throwIfS3Error(await options.transport({ ...(await sign(renew)), body, signal, onProgress: onSent }))
  }
  return withRetries(options.retries, signal, () => attempt(false).catch((error) => (isExpired(error) ? attempt(true) : Promise.reject(error))))
}

/** One PutObject. */
export async function putSingle(
  file: Blob,
  sign: () => Promise<SignedRequest>,
  result: (etag: string) => UploadResult,
  options: ResolvedOptions,
): Promise<UploadResult> {
  const progress = trackProgress(file.size, options.onProgress)
  const put = () => send(options, sign, file, options.signal, (bytes) => progress.sent(1, bytes))
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
    const response = await send(options, sign, file.slice(start, end), signal, (bytes) => progress.sent(partNumber, bytes))
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

/** A presigned URL or signature past its expiry: S3 says AccessDenied "Request has expired". */
const isExpired = (error: unknown) => error instanceof S3Error && error.status === 403 && /expired/i.test(error.message)

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
