/**
 * The wire protocol between the page and the credential endpoint (`/api/s3-upload` by default).
 * A superset of next-s3-upload's, so either side works with the other project's.
 */

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

/** POST {endpoint}/complete */
export interface CompleteRequest {
  ticket: string
  parts: Array<{ partNumber: number; etag: string }>
}
export interface CompleteReply {
  url: string
  bucket: string
  key: string
  etag: string
}

/** POST {endpoint}/abort */
export interface AbortRequest {
  ticket: string
}
export interface AbortReply {
  aborted: true
}

/** Any refusal: the client throws `error` as is. */
export interface ErrorReply {
  error: string
}

/** Cache-Control next-s3-upload puts on objects: public in token mode, not in presigned mode. */
export const TOKEN_CACHE_CONTROL = 'max-age=630720000, public'
export const PRESIGNED_CACHE_CONTROL = 'max-age=630720000'
