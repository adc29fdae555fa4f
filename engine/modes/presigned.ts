import { MAX_PARTS_PER_REQUEST } from '../../protocol/limits.ts'
import type { PartPlan } from '../../protocol/parts.ts'
import {
  type CompleteReply,
  PRESIGNED_CACHE_CONTROL,
  type PartsReply,
  type PresignedMultipartReply,
  type PresignedReply,
  type UploadResult,
} from '../../protocol/wire.ts'
import { type EndpointOptions, postToEndpoint } from '../endpoint.ts'
import { UploadError } from '../errors.ts'
import { resolveOptions, type TransferOptions } from '../options.ts'
import { putMultipart, putSingle } from '../put.ts'

/** Presigned mode: storage requests are signed by the endpoint; this side never holds a key. */
export function sendPresigned(
  file: Blob,
  reply: PresignedReply,
  contentType: string,
  options: TransferOptions & EndpointOptions,
): Promise<UploadResult> {
  const resolved = resolveOptions(options)
  if ('uploadId' in reply) return putMultipart(file, presignedMultipart(file, reply, options, resolved.queueSize), resolved)
  // A next-s3-upload route sends no `headers`: send what its client sends, which its URL signs.
  const headers = reply.headers ?? { 'content-type': contentType, 'cache-control': PRESIGNED_CACHE_CONTROL }
  const location = { url: reply.url.split('?')[0]!, bucket: reply.bucket, key: reply.key }
  return putSingle(file, async () => ({ method: 'PUT', url: reply.url, headers }), (etag) => ({ ...location, etag }), resolved)
}

function presignedMultipart(
  file: Blob,
  reply: PresignedMultipartReply,
  options: EndpointOptions,
  queueSize: number,
) {
  const { ticket, partSize, partCount: count } = reply
  if (count !== Math.ceil(file.size / partSize)) {
    throw new UploadError(`The endpoint planned ${count} parts of ${partSize} bytes for a ${file.size}-byte file`)
  }
  const plan: PartPlan = { size: file.size, partSize, count, lastPartSize: file.size - (count - 1) * partSize }
  // Part URLs are fetched in batches just ahead of need and used once, so none sits long
  // enough to expire, however long the upload runs. A batch never asks for more than one
  // /parts call may sign.
  const batchSize = Math.min(queueSize * 2, MAX_PARTS_PER_REQUEST)
  const pending = new Map<number, Promise<string>>()

  const fetchBatch = (first: number) => {
    const partNumbers: number[] = []
    for (let n = first; n <= count && partNumbers.length < batchSize; n++) if (!pending.has(n)) partNumbers.push(n)
    const batch = postToEndpoint<PartsReply>(options, '/parts', { ticket, partNumbers })
    for (const n of partNumbers) {
      pending.set(
        n,
        batch.then(({ urls }) => urls[n] ?? Promise.reject(new UploadError(`The endpoint sent no URL for part ${n}`))),
      )
    }
  }

  return {
    plan,
    partUrlsExpire: true,
    async signPart(partNumber: number, renew: boolean) {
      if (renew) pending.delete(partNumber)
      if (!pending.has(partNumber)) fetchBatch(partNumber)
      const url = await pending.get(partNumber)!
      pending.delete(partNumber)
      return { method: 'PUT', url }
    },
    async complete(etags: string[], signal?: AbortSignal) {
      const parts = etags.map((etag, i) => ({ partNumber: i + 1, etag }))
      const { url, bucket, key, etag } = await postToEndpoint<CompleteReply>({ ...options, signal }, '/complete', { ticket, parts })
      // Only the result's own fields: whatever else the endpoint sends stays out.
      return { url, bucket, key, etag } satisfies UploadResult
    },
    async abort() {
      await postToEndpoint({ ...options, signal: undefined }, '/abort', { ticket })
    },
  }
}
