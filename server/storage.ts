import { S3Client } from '@aws-sdk/client-s3'
import { isDirectoryBucket } from '../protocol/directory-session.ts'
import { resolveObjectUrl } from '../protocol/endpoint-rules.ts'
import { type ObjectLocation, objectUrl } from '../protocol/object-url.ts'
import { boundedServerCredentials } from './bounded-credentials.ts'
import { boundedRequests, NAMING_TIMEOUTS, namingTimeouts } from './bounds.ts'
import type { ResolvedConfig } from './config.ts'

// The store as the server reaches it: its own S3 client, and the URLs it signs and reports.

/** The server's own S3 client: the multipart calls (create, complete, abort, head). */
export function createS3Client(config: ResolvedConfig): S3Client {
  const client = new S3Client({
    region: config.region,
    // A static key as it is; a provider, or the SDK's default chain, within timeouts.credentials.
    credentials: boundedServerCredentials(config),
    ...(config.endpoint ? { endpoint: config.endpoint } : {}),
    forcePathStyle: config.forcePathStyle,
    // A store that accepts the connection and never answers must not hold the page's request forever.
    requestHandler: boundedRequests(config.timeouts.storage),
    // Otherwise presigned URLs carry an empty-body CRC32 checksum that real S3 rejects, and SDK
    // default checksums on streamed bodies make RGW answer 411.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  })
  client.middlewareStack.add(namingTimeouts('Storage', config.timeouts.storage), NAMING_TIMEOUTS)
  return client
}

/**
 * The object's URL as the server presigns and reports it: a directory bucket's zonal host
 * (`bucket.s3express-zone.region.amazonaws.com`) on AWS, else the engine's own rule.
 */
export const storageObjectUrl = (location: ObjectLocation): string =>
  isDirectoryBucket(location.bucket) ? resolveObjectUrl(location).url : objectUrl(location)
