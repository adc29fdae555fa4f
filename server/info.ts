import { isDirectoryBucket } from '../protocol/directory-session.ts'
import { MAX_BATCH_FILES } from '../protocol/limits.ts'
import type { InfoReply } from '../protocol/wire.ts'
import { isAws, type ResolvedConfig, stsUnavailableReason } from './config.ts'

/** What the config implies, with `config.info` (the app's own knowledge, e.g. an embedded store) over it. */
export function serverInfo(config: ResolvedConfig): InfoReply {
  const reason = tokenUnavailableReason(config)
  return {
    token: reason === undefined,
    ...(reason === undefined ? {} : { tokenUnavailableReason: reason }),
    presigned: true,
    store: config.info?.store ?? describeStore(config),
    // The limits the upload API enforces anyway: a page checks them first and saves the round trip.
    ...(config.maxFileSize === undefined ? {} : { maxFileSize: config.maxFileSize }),
    ...(config.allowedTypes === undefined ? {} : { allowedTypes: [...config.allowedTypes] }),
    // This server takes the batch form (`/batch`, `/batch/complete`); older ones leave it out.
    maxBatchFiles: MAX_BATCH_FILES,
  }
}

/** Why this server will not hand out token credentials, or undefined when it will. */
export function tokenUnavailableReason(config: ResolvedConfig): string | undefined {
  // CreateSession hands out sessions for a whole directory bucket (no key condition exists):
  // credentials allowed to call it could write any key. The first reason: no STS setting helps.
  if (isDirectoryBucket(config.bucket)) {
    return 'the bucket is a directory bucket (S3 Express One Zone), whose sessions cover the whole bucket, so token credentials could write any key; presigned uploads sign each key'
  }
  const noSts = stsUnavailableReason(config)
  if (noSts !== undefined) return noSts
  // A policy can name keys, not Content-Types: credentials would let the page store any type.
  if (config.allowedTypes) {
    return 'allowedTypes is set, and token credentials cannot restrict the Content-Type a page stores; presigned uploads sign it'
  }
  return undefined
}

/** A name a person recognises; the storage endpoint's origin for stores that cannot be told apart. */
export function describeStore({ endpoint, region, bucket }: ResolvedConfig): string {
  const where = `bucket ${bucket}`
  switch (knownStore(endpoint)) {
    case 'aws':
      return `AWS S3 (${region}) · ${where}`
    case 'r2':
      return `Cloudflare R2 · ${where}`
    case 'b2':
      return `Backblaze B2 (${region}) · ${where}`
  }
  return `S3-compatible store at ${new URL(endpoint!).origin} · ${where}`
}

/**
 * The store behind a storage endpoint, where its host tells: none (or an amazonaws.com host, China's
 * included) is AWS; R2 and B2 have their own hosts. Any other (MinIO, Ceph RGW, …) cannot be told
 * apart: `undefined`.
 */
export function knownStore(endpoint: string | undefined): 'aws' | 'r2' | 'b2' | undefined {
  if (endpoint === undefined || isAws(endpoint)) return 'aws'
  const { hostname } = new URL(endpoint)
  if (hostname.endsWith('.r2.cloudflarestorage.com')) return 'r2'
  if (hostname.endsWith('.backblazeb2.com')) return 'b2'
  return undefined
}
