/**
 * The wire protocol between the page and the credential endpoint (`/api/s3-upload` by default).
 * A superset of next-s3-upload's, so either side works with the other project's. Both sides
 * import these types; nothing else restates them.
 */

/** Where the page finds the endpoint unless told otherwise; next-s3-upload's path. */
export const DEFAULT_ENDPOINT = '/api/s3-upload'

export type Strategy = 'token' | 'presigned'

/** POST {endpoint} */
export interface UploadRequest {
  filename: string
  filetype: string
  /** Bytes. Sent by this engine; next-s3-upload's client does not send it. */
  filesize?: number
  /** Absent means token. */
  strategy?: Strategy
  /** next-s3-upload's form of the same marker. */
  _nextS3?: { strategy: 'presigned' | 'aws-sdk' }
  /** The caller's extra fields, handed to the server's `key` callback. */
  [extra: string]: unknown
}

export interface StsCredentials {
  AccessKeyId: string
  SecretAccessKey: string
  SessionToken: string
  Expiration?: string
}

interface LocationReply {
  key: string
  bucket: string
  region: string
}

export interface TokenReply extends LocationReply {
  token: { Credentials: StsCredentials }
  /** Only for a custom store (RGW, MinIO, R2). */
  endpoint?: string
  forcePathStyle?: boolean
  /**
   * HMAC-signed and expiring, binding bucket and key: what `/refresh` and `/duplicates` act on,
   * so they serve this upload's key and never one the page names. Absent from next-s3-upload's
   * replies (its credentials are then never renewed).
   */
  ticket?: string
}

/** POST {endpoint}/refresh: fresh credentials for the key of a token-mode ticket. */
export interface RefreshRequest {
  ticket: string
}
export interface RefreshReply {
  token: { Credentials: StsCredentials }
}

/**
 * POST {endpoint}/duplicates: aborts the multipart uploads on a token-mode ticket's key, but
 * `keep`. A CreateMultipartUpload whose reply was lost, then retried, leaves such a duplicate.
 */
export interface DuplicatesRequest {
  ticket: string
  /** The upload in use; absent when none was created (every upload on the key is aborted). */
  keep?: string
}
export interface DuplicatesReply {
  aborted: number
}

export interface PresignedPutReply extends LocationReply {
  endpoint?: string
  url: string
  /** Headers signed into the URL that the PUT must carry. Absent from next-s3-upload's replies. */
  headers?: Record<string, string>
}

export interface PresignedMultipartReply extends LocationReply {
  endpoint?: string
  uploadId: string
  partSize: number
  partCount: number
  /** HMAC-signed, expiring and stateless: binds bucket, key, uploadId, partSize and filesize. */
  ticket: string
}

export type PresignedReply = PresignedPutReply | PresignedMultipartReply

/** POST {endpoint}/parts */
export interface PartsRequest {
  ticket: string
  partNumbers: number[]
}
export interface PartsReply {
  urls: Record<string, string>
}

/**
 * POST {endpoint}/list-parts `{ ticket }` (servers with `resumable` on): the parts storage holds
 * for a presigned multipart ticket's upload, so a page that reloaded re-sends only what is missing.
 * 404 when the upload is gone from storage (aborted, expired, completed).
 */
export interface ListPartsReply {
  parts: StoredPart[]
}

/** A part storage holds: what ListParts says of it. */
export interface StoredPart {
  partNumber: number
  etag: string
  size: number
}

/** What a finished upload is: the result of `upload()`, and the reply of `/complete`. */
export interface UploadResult {
  /** The object's URL, without any signature. */
  url: string
  bucket: string
  key: string
  /** As storage reported it; empty when the store sends none (RGW's CompleteMultipartUpload). */
  etag: string
}

/** POST {endpoint}/complete */
export interface CompleteRequest {
  ticket: string
  parts: Array<{ partNumber: number; etag: string }>
}
export type CompleteReply = UploadResult

/** POST {endpoint}/abort */
export interface AbortRequest {
  ticket: string
}
export interface AbortReply {
  aborted: true
}

/**
 * GET {endpoint}/info: which modes this server can serve, and with which store, so a page can
 * offer token mode only where it works. It carries nothing a presigned reply does not already
 * show the page: no keys, no role ARN.
 */
export interface InfoReply {
  token: boolean
  /** Why token mode is off; present exactly when `token` is false. */
  tokenUnavailableReason?: string
  /** Every server can presign: it needs only the access key it already has. */
  presigned: true
  /** The storage in use, for display: "AWS S3 (eu-west-1) · bucket uploads", … */
  store: string
  /** The endpoint's `maxFileSize` in bytes, when set: a page refuses larger files before asking. */
  maxFileSize?: number
  /**
   * The endpoint's `allowedTypes`, when set (`image/*`, `application/pdf`): a page's file picker
   * offers only these, and it refuses others before asking (protocol/file-limits.ts).
   */
  allowedTypes?: string[]
}

/** Any refusal: the client throws `error` as is. */
export interface ErrorReply {
  error: string
}

/** Cache-Control next-s3-upload puts on objects: public in token mode, not in presigned mode. */
export const TOKEN_CACHE_CONTROL = 'max-age=630720000, public'
export const PRESIGNED_CACHE_CONTROL = 'max-age=630720000'
