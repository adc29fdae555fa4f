import { UploadError } from './errors.ts'
import { resolveOptions, type TransferOptions } from './options.ts'
import { planParts } from './parts.ts'
import { completeXml, objectUrl, type ObjectLocation, xmlText } from './s3.ts'
import { createSigner, type Credentials } from './signer.ts'
import { putMultipart, putSingle, send, type UploadResult } from './transfer.ts'

export interface ObjectTarget extends ObjectLocation, TransferOptions {
  credentials: Credentials
  /** @default the Blob's own type */
  contentType?: string
  cacheControl?: string
}

/** Uploads `file` to one object with credentials the caller already holds (token mode, or server-side). */
export async function uploadObject(file: Blob, target: ObjectTarget): Promise<UploadResult> {
  const options = resolveOptions(target)
  const plan = planParts(file.size, options.partSize)
  const url = objectUrl(target)
  const sign = createSigner(target.credentials, target.region, url)
  const objectHeaders = definedHeaders({
    'content-type': target.contentType || file.type,
    'cache-control': target.cacheControl,
  })
  const result = (etag: string): UploadResult => ({ url, bucket: target.bucket, key: target.key, etag })

  if (plan.count <= 1) return putSingle(file, () => sign('PUT', '', objectHeaders), result, options)

  const created = await send(options, () => sign('POST', '?uploads', objectHeaders), { signal: options.signal })
  const uploadId = xmlText(created.body, 'UploadId')
  if (!uploadId) throw new UploadError('CreateMultipartUpload answered without an UploadId')
  const ofUpload = `uploadId=${encodeURIComponent(uploadId)}`

  return putMultipart(
    file,
    {
      plan,
      signPart: (partNumber) => sign('PUT', `?partNumber=${partNumber}&${ofUpload}`),
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

const definedHeaders = (headers: Record<string, string | undefined>) =>
  Object.fromEntries(Object.entries(headers).filter(([, value]) => value)) as Record<string, string>
