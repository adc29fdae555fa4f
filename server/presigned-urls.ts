import { PRESIGNED_CACHE_CONTROL } from '../protocol/wire.ts'
import type { ResolvedConfig } from './config.ts'
import { NO_COPY_HEADERS } from './copy-guard.ts'
import type { Presign } from './presigner.ts'
import { storageObjectUrl } from './storage.ts'
import type { TicketClaims } from './ticket.ts'

/** Presigned URLs live as long as next-s3-upload's; parts are signed just ahead of need, so this is plenty. */
export const PRESIGN_EXPIRES_IN = 60 * 60

/** What a single-request upload is signed for: the key the upload API chose, the canonical type, the declared size. */
export interface SingleUpload {
  key: string
  contentType: string
  filesize: number | undefined
}

export interface PresignedPut {
  url: string
  /** Signed into the URL: the PUT must carry exactly these. */
  headers: Record<string, string>
}

/**
 * The headers that decide how storage keeps and serves an object, signed into every presigned
 * upload so a page cannot change them: Content-Type (the canonical media type), next-s3-upload's
 * Cache-Control, the configured canned ACL (RGW and s3rver apply an unsigned `x-amz-acl:
 * public-read`) and Content-Disposition when configured. A second value for any of them changes
 * the signed value, and storage refuses the request. On a store other than AWS, also a copy
 * source range no object can satisfy, so that the URL cannot become a copy (server/copy-guard.ts).
 */
export function objectHeaders(config: ResolvedConfig, contentType: string): Record<string, string> {
  const headers = servingHeaders(config, contentType)
  if (config.copyGuard) Object.assign(headers, NO_COPY_HEADERS)
  return headers
}

/** {@link objectHeaders} but the copy guard: how the object is kept and served, whatever request writes it. */
export function servingHeaders(config: ResolvedConfig, contentType: string): Record<string, string> {
  const headers: Record<string, string> = { 'Cache-Control': PRESIGNED_CACHE_CONTROL, 'Content-Type': contentType }
  if (config.objectAcl) headers['x-amz-acl'] = config.objectAcl
  if (config.contentDisposition) headers['Content-Disposition'] = config.contentDisposition
  return headers
}

/**
 * Presigned PutObject URLs, as next-s3-upload signs them (3600 s) plus the headers above and the
 * declared size: storage refuses a body of any other length. Signed by `signer`
 * (server/session-signer.ts) through the SDK's S3RequestPresigner (server/presigner.ts).
 */
export function createPutPresigner(config: ResolvedConfig, signer: () => Promise<Presign>) {
  return async ({ key, contentType, filesize }: SingleUpload): Promise<PresignedPut> => {
    const headers = objectHeaders(config, contentType)
    const signed = filesize === undefined ? headers : { ...headers, 'Content-Length': String(filesize) }
    const presign = await signer()
    const url = await presign({
      method: 'PUT',
      url: storageObjectUrl({ ...config, key }),
      headers: signed,
      expiresIn: PRESIGN_EXPIRES_IN,
    })
    return { url, headers }
  }
}

/**
 * UploadPart URLs for the parts of a ticket's upload, each binding that part's exact
 * `content-length` (`lengths`: from the same plan the engine slices by, or as an upload of unknown
 * length declared them), so no part can carry more; and the part's `content-md5` when the page
 * sent one (`checksum('md5')`), so storage takes only those bytes.
 */
export function createPartPresigner(config: ResolvedConfig, signer: () => Promise<Presign>) {
  return async (
    claims: TicketClaims,
    lengths: ReadonlyMap<number, number>,
    contentMd5?: Record<string, string>,
  ): Promise<Record<string, string>> => {
    const url = storageObjectUrl({ ...config, bucket: claims.bucket, key: claims.key })
    const presign = await signer()
    const date = new Date()
    const urls: Record<string, string> = {}
    for (const [partNumber, length] of lengths) {
      urls[partNumber] = await presign({
        method: 'PUT',
        url,
        query: { partNumber: String(partNumber), uploadId: claims.uploadId },
        headers: {
          'content-length': String(length),
          ...(contentMd5?.[partNumber] && { 'content-md5': contentMd5[partNumber] }),
        },
        expiresIn: config.partUrlExpiresIn,
        date,
      })
    }
    return urls
  }
}
