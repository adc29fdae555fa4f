import {
  PRESIGNED_CACHE_CONTROL,
  type PresignedFormReply,
  type PresignedPutReply,
  type PresignedReply,
  type UploadResult,
} from '../../protocol/wire.ts'
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
  const { form } = reply as PresignedFormReply
  // A form (`formUploads`): one POST to the bucket's URL, its fields before the file.
  const sent = form && (await loadForm()).formBody(form, body)
  const { url, headers } = reply as PresignedPutReply
  // A next-s3-upload route sends no `headers`: send what its client sends, which its URL signs.
  const signed = headers ?? { 'content-type': contentType, 'cache-control': PRESIGNED_CACHE_CONTROL }
  // A form's object URL comes from `/complete` (confirmUpload: the result names none).
  const location = { bucket: reply.bucket, key: reply.key, ...(form ? {} : { url: url.split('?')[0] }) }
  // One URL, or one form, signed once: a refusal of it is final. A body over one part (a server that
  // never goes multipart) is not read into memory to be hashed.
  const sign = async (refused?: Error) => {
    if (refused) throw refused
    return sent
      ? { method: 'POST', url: form!.url, headers: { 'content-type': sent.type } }
      : {
          method: 'PUT',
          url,
          headers: { ...signed, ...(sizeOf(body) <= options.partSize && (await checksums?.headers(0, body))) },
        }
  }
  return putSingle(body, sign, (etag) => ({ ...location, etag }) as UploadResult, run, sent)
}

/** Presigned multipart (part URLs from `/parts`, the part loop), a chunk of its own: loaded for a body over one part. */
export const loadPresignedMultipart = lazily(() => import('./presigned-multipart.ts'))

/**
 * Presigned mode's part of the upload request: a body of one request can go as a POST form (one
 * CORS preflight for the page rather than one per file), unless a checksum is to go with it (a
 * form carries no Content-MD5); for a body over one part, its multipart code starts loading.
 */
export const presignedFields: RequestFields = (size, options) => {
  if (size! <= options.partSize) {
    if (options.checksum) return {}
    loadForm().catch(() => {})
    return { form: true }
  }
  loadPresignedMultipart().catch(() => {})
  return {}
}

/** The form's body (engine/s3/form.ts), a chunk of its own: loaded beside the upload request that asks for a form. */
const loadForm = lazily(() => import('../s3/form.ts'))
