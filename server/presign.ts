import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3'
import { getSignedUrl } from '@aws-sdk/s3-request-presigner'
import { partRange, planParts } from '../engine/parts.ts'
import { PRESIGNED_CACHE_CONTROL } from '../engine/protocol.ts'
import { objectUrl } from '../engine/s3.ts'
import type { ResolvedConfig } from './config.ts'
import { createQueryPresigner } from './sigv4.ts'
import type { TicketClaims } from './ticket.ts'

/** Presigned URLs live as long as next-s3-upload's; parts are signed just ahead of need, so this is plenty. */
export const PRESIGN_EXPIRES_IN = 60 * 60

/** The server's own S3 client: presigned PUTs and the multipart calls (create, complete, abort, head). */
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
 * One presigned PutObject, as next-s3-upload signs it (ContentType, Cache-Control
 * `max-age=630720000`, 3600 s) plus the declared size: storage refuses a body of any other
 * length. Content-Type and Cache-Control are signed too, so the object gets exactly these.
 */
export async function presignPut(
  client: S3Client,
  config: ResolvedConfig,
  { key, filetype, filesize }: { key: string; filetype: string; filesize: number | undefined },
): Promise<PresignedPut> {
  const headers: Record<string, string> = { 'Cache-Control': PRESIGNED_CACHE_CONTROL }
  if (filetype) headers['Content-Type'] = filetype
  const command = new PutObjectCommand({
    Bucket: config.bucket,
    Key: key,
    ContentType: filetype || undefined,
    CacheControl: PRESIGNED_CACHE_CONTROL,
    ContentLength: filesize,
  })
  const url = await getSignedUrl(client, command, {
    expiresIn: PRESIGN_EXPIRES_IN,
    // The SDK signs content-length by itself when ContentLength is set; these two it would leave
    // unsigned. Without a type, content-type stays out: the SDK would sign a default of its own.
    signableHeaders: new Set(filetype ? ['content-type', 'cache-control'] : ['cache-control']),
  })
  return { url, headers }
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
