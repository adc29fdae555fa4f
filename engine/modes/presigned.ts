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
import { postToEndpoint } from '../endpoint.ts'
import { UploadError } from '../errors.ts'
import type { ResolvedOptions } from '../options.ts'
import { type MultipartUpload, putMultipart, putSingle } from '../put.ts'

/** Presigned mode: storage requests are signed by the endpoint; this side never holds a key. */
export function sendPresigned(file: Blob, reply: PresignedReply, contentType: string, options: ResolvedOptions): Promise<UploadResult> {
  if ('uploadId' in reply) return putMultipart(file, presignedMultipart(file, reply, options), options)
  // A next-s3-upload route sends no `headers`: send what its client sends, which its URL signs.
  const headers = reply.headers ?? { 'content-type': contentType, 'cache-control': PRESIGNED_CACHE_CONTROL }
  const location = { url: reply.url.split('?')[0]!, bucket: reply.bucket, key: reply.key }
  // One URL, signed once: a refusal of it is final.
  const sign = async (refused?: Error) => {
    if (refused) throw refused
    return { method: 'PUT', url: reply.url, headers }
  }
  return putSingle(file, sign, (etag) => ({ ...location, etag }), options)
}

function presignedMultipart(file: Blob, reply: PresignedMultipartReply, options: ResolvedOptions): MultipartUpload {
  const { ticket, partSize, partCount: count } = reply
  // The endpoint's plan as it stands (planParts would choose a part size of its own). A plan that
  // does not fit the file fails the first signing, inside the upload, so what the endpoint
  // created is still aborted.
  const misplanned =
    count !== Math.ceil(file.size / partSize) &&
    new UploadError(`The endpoint planned ${count} parts of ${partSize} bytes for a ${file.size}-byte file`)
  const plan: PartPlan = { size: file.size, partSize, count, lastPartSize: file.size - (count - 1) * partSize }
  // Part URLs are fetched in batches just ahead of need, so none sits long enough to expire,
  // however long the upload runs. A batch never asks for more than one /parts call may sign.
  // The first parts' URLs came with the reply (from endpoints that send them).
  const batchSize = Math.min(options.partConcurrency * 2, MAX_PARTS_PER_REQUEST)
  const pending = new Map<number, string | Promise<string>>()
  for (const n in reply.urls) pending.set(+n, reply.urls[n]!)

  const fetchBatch = (first: number) => {
    const partNumbers: number[] = []
    for (let n = first; n <= count && partNumbers.length < batchSize; n++) if (!pending.has(n)) partNumbers.push(n)
    const batch = postToEndpoint<PartsReply>(options, '/parts', { ticket, partNumbers }, options.signal)
    for (const n of partNumbers) {
      const url = batch.then(({ urls }) => urls[n] ?? Promise.reject(new UploadError(`The endpoint sent no URL for part ${n}`)))
      // URLs fetched ahead may never be awaited (the upload failed first): their rejection must
      // not go unhandled. The part that does await one still sees it; its next try (after a
      // pause, or a wait for the network) asks again.
      url.catch(() => pending.get(n) === url && pending.delete(n))
      pending.set(n, url)
    }
  }

  return {
    uploadId: reply.uploadId,
    plan,
    // A URL serves its part's retries too; one can expire before use (and RGW refuses an expired
    // one with a bare 403): a refused URL is worth one fresh one.
    async signPart(partNumber, refused) {
      if (misplanned) throw misplanned
      if (refused) pending.delete(partNumber)
      if (!pending.has(partNumber)) fetchBatch(partNumber)
      // The next batch is asked for while as many parts as run at once are still to go on this
      // one, so no part waits on a /parts round trip.
      const ahead = partNumber + options.partConcurrency
      if (ahead <= count && !pending.has(ahead)) fetchBatch(ahead)
      return { method: 'PUT', url: await pending.get(partNumber)! }
    },
    async complete(etags) {
      const parts = etags.map((etag, i) => ({ partNumber: i + 1, etag }))
      const { url, bucket, key, etag, serverData } = await postToEndpoint<CompleteReply>(options, '/complete', { ticket, parts }, options.signal)
      // Only the result's own fields: whatever else the endpoint sends stays out.
      return { url, bucket, key, etag, serverData } satisfies UploadResult
    },
    abort: (deadline) => postToEndpoint(options, '/abort', { ticket }, deadline),
  }
}
