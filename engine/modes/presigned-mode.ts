import { PRESIGNED_CACHE_CONTROL, type PresignedReply, type UploadResult } from '../../protocol/wire.ts'
import { type Bytes, isBytes, sizeOf } from '../core/body.ts'
import { lazily } from '../core/lazy.ts'
import type { UploadRun } from '../core/run.ts'
import type { PartStream } from '../core/stream-body.ts'
import { putSingle } from '../s3/put.ts'
import type { RequestFields, UploadOptions } from './request.ts'

/** Presigned mode: storage requests are signed by the upload API; this side never holds a key. */
export async function sendPresigned(
  file: Bytes | PartStream,
  reply: PresignedReply,
  contentType: string,
  run: UploadRun<UploadOptions>,
): Promise<UploadResult> {
  const { options } = run
  // Content-MD5 is a standard header: storage verifies it on a presigned request without the URL signing it.
  const checksums = options.checksum?.(options)
  if ('uploadId' in reply) return (await loadPresignedMultipart()).putPresignedParts(file, reply, run, checksums)
  // One PUT for a stream longer than a part: the upload API chose it for the size declared.
  const body = isBytes(file) ? file : await file.whole()
  // A next-s3-upload route sends no `headers`: send what its client sends, which its URL signs.
  const headers = reply.headers ?? { 'content-type': contentType, 'cache-control': PRESIGNED_CACHE_CONTROL }
  const location = { url: reply.url.split('?')[0]!, bucket: reply.bucket, key: reply.key }
  // One URL, signed once: a refusal of it is final. A body over one part (a server that never goes
  // multipart) is not read into memory to be hashed.
  const sign = async (refused?: Error) => {
    if (refused) throw refused
    return {
      method: 'PUT',
      url: reply.url,
      headers: { ...headers, ...(sizeOf(body) <= options.partSize && (await checksums?.headers(0, body))) },
    }
  }
  return putSingle(body, sign, (etag) => ({ ...location, etag }), run)
}

/** Presigned multipart (part URLs from `/parts`, the part loop), a chunk of its own: loaded for a body over one part. */
export const loadPresignedMultipart = lazily(() => import('./presigned-multipart.ts'))

/** Presigned mode's part of the upload request: nothing to add; for a body over one part, its multipart code starts loading. */
export const presignedFields: RequestFields = (size, options) => {
  if (!(size! <= options.partSize)) loadPresignedMultipart().catch(() => {})
  return {}
}
