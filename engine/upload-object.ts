import { objectUrl, type ObjectLocation } from '../protocol/object-url.ts'
import { planParts } from '../protocol/parts.ts'
import type { UploadResult } from '../protocol/wire.ts'
import { UploadError } from './errors.ts'
import { resolveOptions, type TransferOptions } from './options.ts'
import { putMultipart, putSingle } from './put.ts'
import { completeXml, xmlText } from './s3.ts'
import { send } from './send.ts'
import { createSigner, type Credentials } from './signer.ts'

export interface ObjectTarget extends ObjectLocation, TransferOptions {
  credentials: Credentials
  /** @default the Blob's own type */
  contentType?: string
  cacheControl?: string
  /**
   * Extra headers, signed, for PutObject and CreateMultipartUpload only: `x-amz-tagging` (see
   * `taggingHeaders`), `x-amz-meta-*`, `x-amz-storage-class`… Lower-case names; `content-type`
   * and `cache-control` come from the two options above.
   */
  objectHeaders?: Record<string, string>
  /**
   * As `objectHeaders`, and on every UploadPart too (never Complete or Abort): the SSE-C headers
   * S3 wants on each request that carries the object's bytes (see `sseCustomerKey`).
   */
  uploadHeaders?: Record<string, string>
}

/**
 * What an opt-in module adds to an `ObjectTarget`. Each opt-in fills one field only, so several
 * spread into one target without overwriting each other:
 * `{ ...target, ...sseCustomerKey(key), ...taggingHeaders(tags) }`.
 */
export type ObjectExtras = Pick<ObjectTarget, 'objectHeaders' | 'uploadHeaders'>

/** Uploads `file` to one object with credentials the caller already holds (token mode, or server-side). */
export async function uploadObject(file: Blob, target: ObjectTarget): Promise<UploadResult> {
  const options = resolveOptions(target)
  const plan = planParts(file.size, options.partSize)
  const url = objectUrl(target)
  const sign = createSigner(target.credentials, target.region, url)
  // Empty values (a Blob with no type, no cache-control) are left out rather than sent blank.
  const objectHeaders = Object.fromEntries(
    Object.entries({
      ...target.objectHeaders,
      ...target.uploadHeaders,
      'content-type': target.contentType || file.type,
      'cache-control': target.cacheControl,
    }).filter(([, value]) => value),
  ) as Record<string, string>
  const result = (etag: string): UploadResult => ({ url, bucket: target.bucket, key: target.key, etag })

  if (plan.count < 2) return putSingle(file, () => sign('PUT', '', objectHeaders), result, options)

  const created = await send(options, () => sign('POST', '?uploads', objectHeaders), { signal: options.signal })
  const uploadId = xmlText(created.body, 'UploadId')
  if (!uploadId) throw new UploadError('CreateMultipartUpload: no UploadId')
  const ofUpload = `uploadId=${encodeURIComponent(uploadId)}`

  return putMultipart(
    file,
    {
      plan,
      signPart: (partNumber) => sign('PUT', `?partNumber=${partNumber}&${ofUpload}`, target.uploadHeaders),
      async complete(etags, signal) {
        const completeSign = () => sign('POST', `?${ofUpload}`, { 'content-type': 'application/xml' })
        const completed = await send(options, completeSign, { body: completeXml(etags), signal })
        return result(xmlText(completed.body, 'ETag') ?? '')
      },
      async abort() {
        // Not under the caller's signal: cleanup runs precisely because that signal fired.
        await send(options, () => sign('DELETE', `?${ofUpload}`), { signal: undefined })
      },
    },
    options,
  )
}
