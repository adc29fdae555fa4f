import { S3Client } from '@aws-sdk/client-s3'
import { objectUrl } from '../protocol/object-url.ts'
import { partRange, planParts } from '../protocol/parts.ts'
import { PRESIGNED_CACHE_CONTROL } from '../protocol/wire.ts'
import type { ResolvedConfig } from './config.ts'
import { createQueryPresigner } from './sigv4.ts'
import type { TicketClaims } from './ticket.ts'

/** Presigned URLs live as long as next-s3-upload's; parts are signed just ahead of need, so this is plenty. */
export const PRESIGN_EXPIRES_IN = 60 * 60

/** The server's own S3 client: the multipart calls (create, complete, abort, head). */
export function createS3Client(config: ResolvedConfig): S3Client {
  return new S3Client({
    region: config.region,
    credentials: { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey },
    ...(config.endpoint ? { endpoint: config.endpoint } : {}),
    forcePathStyle: config.forcePathStyle,
    // Otherwise presigned URLs carry an empty-body CRC32 checksum that real S3 rejects, and SDK
    // default checksums on streamed bodies make RGW answer 411.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  })
}

export interface PresignedPut {
  url: string
  /** Signed into the URL: the PUT must carry exactly these. */
  headers: Record<string, string>
}

/**
 * Presigned PutObject URLs, as next-s3-upload signs them (Content-Type, Cache-Control
 * `max-age=630720000`, 3600 s) plus the declared size: storage refuses a body of any other
 * length. Content-Type and Cache-Control are signed too, so the object gets exactly these. Signed
 * with the same synchronous presigner as part URLs: the SDK's takes ~15x the CPU per URL
 * (bench/RESULTS.md, "Endpoint").
 */
export function createPutPresigner(config: ResolvedConfig) {
  const presign = createQueryPresigner(config, config.region)
  return ({ key, filetype, filesize }: { key: string; filetype: string; filesize: number | undefined }): PresignedPut => {
    const headers: Record<string, string> = { 'Cache-Control': PRESIGNED_CACHE_CONTROL }
    // Without a type, content-type stays unsigned: the browser then sends none, or the Blob's own.
    if (filetype) headers['Content-Type'] = filetype
    const signed = filesize === undefined ? headers : { ...headers, 'Content-Length': String(filesize) }
    const url = presign({ method: 'PUT', url: objectUrl({ ...config, key }), headers: signed, expiresIn: PRESIGN_EXPIRES_IN })
    return { url, headers }
  }
}

/**
 * UploadPart URLs for the parts of a ticket's upload, each binding that part's exact
 * `content-length` (from the same plan the engine slices by), so no part can carry more.
 */
export function createPartPresigner(config: ResolvedConfig) {
  const presign = createQueryPresigner(config, config.region)
  return (claims: TicketClaims, partNumbers: readonly number[]): Record<string, string> => {
    const plan = planParts(claims.filesize, claims.partSize)
    const url = objectUrl({ ...config, bucket: claims.bucket, key: claims.key })
    const date = new Date()
    const urls: Record<string, string> = {}
    for (const partNumber of partNumbers) {
      const [start, end] = partRange(plan, partNumber)
      urls[partNumber] = presign({
        method: 'PUT',
        url,
        query: { partNumber: String(partNumber), uploadId: claims.uploadId },
        headers: { 'content-length': String(end - start) },
        expiresIn: config.partUrlExpiresIn,
        date,
      })
    }
    return urls
  }
}
