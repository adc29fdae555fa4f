import { S3Client } from '@aws-sdk/client-s3'
import { isDirectoryBucket } from '../protocol/directory-session.ts'
import { resolveObjectUrl } from '../protocol/endpoint-rules.ts'
import { objectUrl, type ObjectLocation } from '../protocol/object-url.ts'
import type { ResolvedConfig } from './config.ts'

// The store as the server reaches it: its own S3 client, and the URLs it signs and reports.

/** The server's own S3 client: the multipart calls (create, complete, abort, head). */
export function createS3Client(config: ResolvedConfig): S3Client {
  return new S3Client({
    region: config.region,
    // undefined: the SDK's default chain (server/credentials.ts).
    credentials: config.credentials,
    ...(config.endpoint ? { endpoint: config.endpoint } : {}),
    forcePathStyle: config.forcePathStyle,
    // A store that accepts the connection and never answers must not hold the page's request forever.
    requestHandler: { connectionTimeout: 5_000, requestTimeout: 30_000 },
    // Otherwise presigned URLs carry an empty-body CRC32 checksum that real S3 rejects, and SDK
    // default checksums on streamed bodies make RGW answer 411.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  })
}

/**
 * The object's URL as the server presigns and reports it: a directory bucket's zonal host
 * (`bucket.s3express-zone.region.amazonaws.com`) on AWS, else the engine's own rule.
 */
export const storageObjectUrl = (location: ObjectLocation): string =>
  isDirectoryBucket(location.bucket) ? resolveObjectUrl(location).url : objectUrl(location)
