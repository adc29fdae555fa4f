import { type PartPlan, partRange } from '../protocol/parts.ts'
import type { UploadResult } from '../protocol/wire.ts'
import { UploadAbortedError, UploadError, missingETag } from './errors.ts'
import type { ResolvedOptions } from './options.ts'
import { trackProgress } from './progress.ts'
import { runPool } from './queue.ts'
import { send, type SignedRequest } from './send.ts'

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
