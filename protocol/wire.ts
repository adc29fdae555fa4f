/**
 * The wire protocol between the page and the upload API (`/api/s3-upload` by default).
 * A superset of next-s3-upload's, so either side works with the other project's. Both sides
 * import these types; nothing else restates them.
 */

/** Where the page finds the upload API unless told otherwise; next-s3-upload's path. */
export const DEFAULT_API_PATH = '/api/s3-upload'

/** How the page gets permission: STS credentials for one key ('token'), or presigned URLs. */
export type Strategy = 'token' | 'presigned'

/** POST {api} */
export interface UploadRequest {
  /** The file's name (or relative path in a dropped folder): the default key is built from it. */
  filename: string
  /** Its media type: signed as the object's Content-Type. */
  filetype: string
  /** Bytes. Sent by this engine; next-s3-upload's client does not send it. */
  filesize?: number
  /**
   * The body is a stream longer than one part whose length is known only at its end: sent with
   * `filesize` absent (both together are refused, 400). The server then always goes multipart
   * (presigned: a {@link PresignedMultipartReply} without `partCount`; token: the usual
   * {@link TokenReply}), binds the flag into the ticket, and enforces its `maxFileSize` by capping
   * part numbers and sizes and by checking the stored size at `/complete`. Without the flag an
   * absent `filesize` keeps its older meaning (next-s3-upload's client: no `/complete`).
   */
  sizeUnknown?: boolean
  /**
   * Token mode, a declared `filesize` the page will send in parts: the upload API creates the
   * multipart upload itself, next to its store, and answers its `uploadId`; the page then sends
   * only the parts and ends the upload at `/complete` with them, which sends
   * CompleteMultipartUpload. Two round trips fewer from the page (four in a browser, where each
   * storage request has a preflight). The page asks only when it adds nothing of its own to
   * CreateMultipartUpload (no checksum, SSE-C or other object headers). An upload API that does not
   * know the flag ignores it, and the page creates the upload itself.
   */
  createMultipart?: boolean
  /**
   * Presigned mode: the page can send the file as an S3 POST form (`PresignedFormReply`) rather
   * than a PUT. Forms all go to the bucket's one URL, so a browser sends one CORS preflight for
   * the page (cached for the bucket rule's `MaxAgeSeconds`) where each PUT URL needs its own. An
   * upload API answers with a form only for a file of one request, when its `formUploads` is on
   * and its store has shown that it enforces POST policies; otherwise, and on an API that does
   * not know the flag, the usual PUT URL. Token mode ignores it.
   */
  form?: boolean
  /** Absent means token. */
  strategy?: Strategy
  /** next-s3-upload's form of the same marker. */
  _nextS3?: { strategy: 'presigned' | 'aws-sdk' }
  /**
   * Fields the server's `metadata` option validates, binds into the ticket and hands to its `key`
   * callback and `onUploadComplete`. A server without that option refuses them.
   */
  metadata?: unknown
  /** The caller's extra fields, handed to the server's `key` callback. */
  [extra: string]: unknown
}

/** STS credentials as the AWS SDK spells them (next-s3-upload's `token.Credentials`). */
export interface StsCredentials {
  AccessKeyId: string
  SecretAccessKey: string
  SessionToken: string
  /** ISO 8601; the engine refreshes token-mode credentials from `/refresh` before this. */
  Expiration?: string
}

/** What every reply to an {@link UploadRequest} says of where the object goes: the upload API chose the key. */
export interface LocationReply {
  /** The object's key, as the upload API built it. */
  key: string
  /** The bucket's name. */
  bucket: string
  /** The bucket's region (`auto` for R2). */
  region: string
}

/** Reply to a token-mode {@link UploadRequest}: credentials allowed to write `key` only. */
export interface TokenReply extends LocationReply {
  token: { Credentials: StsCredentials }
  /** Only for a custom store (RGW, MinIO, R2). */
  endpoint?: string
  /** Path-style URLs for a custom store. */
  forcePathStyle?: boolean
  /**
   * The multipart upload the upload API created, when the request asked (`createMultipart`): the
   * page sends its parts, and `/complete` with them (`CompleteRequest.parts`) completes it.
   */
  uploadId?: string
  /**
   * HMAC-signed and expiring, binding bucket, key, declared size and type, metadata and an
   * uploadId: what `/refresh`, `/duplicates` and `/complete` act on, so they serve this upload's
   * key and never one the page names. Absent from next-s3-upload's replies (its credentials are
   * then never renewed, and the engine calls no `/complete`).
   */
  ticket?: string
}

/** POST {api}/refresh: fresh credentials for the key of a token-mode ticket. */
export interface RefreshRequest {
  ticket: string
}
/** Reply to {@link RefreshRequest}: fresh credentials for the same key. */
export interface RefreshReply {
  token: { Credentials: StsCredentials }
}

/**
 * POST {api}/duplicates: aborts the multipart uploads on a token-mode ticket's key, but
 * `keep`. A CreateMultipartUpload whose reply was lost, then retried, leaves such a duplicate.
 */
export interface DuplicatesRequest {
  ticket: string
  /** The upload in use; absent when none was created (every upload on the key is aborted). */
  keep?: string
}
/** Reply to {@link DuplicatesRequest}. */
export interface DuplicatesReply {
  /** How many uploads were aborted. */
  aborted: number
}

/** Reply to a presigned {@link UploadRequest} for one PUT (and next-s3-upload's presigned reply). */
export interface PresignedPutReply extends LocationReply {
  endpoint?: string
  /** The presigned PUT URL. */
  url: string
  /** Headers signed into the URL that the PUT must carry. Absent from next-s3-upload's replies. */
  headers?: Record<string, string>
  /** What the engine sends to `/complete` once storage holds the object (as `TokenReply.ticket`). Absent from next-s3-upload's replies. */
  ticket?: string
}

/**
 * Reply to a presigned {@link UploadRequest} whose `filesize` is over the server's
 * `multipartThreshold`: the upload API has created the multipart upload; part URLs come from
 * `/parts`, and `/complete` or `/abort` end it.
 */
export interface PresignedMultipartReply extends LocationReply {
  endpoint?: string
  /** The multipart upload the upload API created. */
  uploadId: string
  /**
   * Bytes per part (every part but the last). For an upload of unknown length the engine cuts
   * every part but the last to exactly this size: the server's, not the engine's own option.
   */
  partSize: number
  /**
   * How many parts the server planned for the declared `filesize`. Absent when the request said
   * `sizeUnknown`: the number of parts is known only when the page completes, and each `/parts`
   * call then declares the length of every part it asks for (`PartsRequest.sizes`).
   */
  partCount?: number
  /**
   * HMAC-signed, expiring and stateless: binds bucket, key, uploadId, partSize, filesize (or that
   * the size is unknown), type and metadata.
   */
  ticket: string
  /**
   * URLs of the first parts (up to FIRST_PART_URLS), by part number, as `/parts` answers: the
   * first PUTs go out without another round trip. Absent from older upload APIs: then `/parts`.
   * For an upload of unknown length each is bound to exactly `partSize` bytes: use one only for a
   * part of that length, and ask `/parts` (with `sizes`) for any other.
   */
  urls?: Record<string, string>
}

/**
 * Reply to a presigned {@link UploadRequest} that asked for a `form`: one S3 POST Object
 * (https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-UsingHTTPPOST.html). Its policy binds
 * what a PUT URL binds — the exact key, the bucket, the Content-Type, Cache-Control, the canned
 * ACL and Content-Disposition as configured, a length of exactly `filesize` bytes
 * (`content-length-range`), the same expiry — and refuses any field it does not name.
 */
export interface PresignedFormReply extends LocationReply {
  endpoint?: string
  form: PresignedForm
  /** What the engine sends to `/complete` once storage holds the object (as `PresignedPutReply.ticket`). */
  ticket: string
}

/** An S3 POST form: `fields` in order, then the file last (as `file`), `multipart/form-data` to `url`. */
export interface PresignedForm {
  /** The bucket's URL: the same for every form of a bucket. */
  url: string
  /** The policy, its signature and every field it names, as they must be sent. */
  fields: Record<string, string>
}

/** Reply to a presigned {@link UploadRequest}: one PUT, one POST form, or a multipart upload. */
export type PresignedReply = PresignedPutReply | PresignedFormReply | PresignedMultipartReply

/** POST {api}/parts */
export interface PartsRequest {
  ticket: string
  /** 1-based, at most 100 per request. */
  partNumbers: number[]
  /**
   * Part number → the part's base64 MD5 (`checksum('md5')`): signed into its URL as `Content-MD5`,
   * so storage takes only those bytes (a damaged part is refused, BadDigest) and the PUT must carry it.
   */
  contentMd5?: Record<string, string>
  /**
   * Part number → that part's length in bytes (1..`partSize`), signed into its URL so storage
   * takes exactly that many. Required, naming every number in `partNumbers`, for an upload whose
   * request said `sizeUnknown`; refused (400) for any other, whose plan fixes each length. Part
   * numbers above `min(10000, ceil(maxFileSize / partSize))` are refused (413). Goes along with
   * `contentMd5` when checksums are on.
   */
  sizes?: Record<string, number>
}
/** Reply to {@link PartsRequest}. */
export interface PartsReply {
  /** Part number (as a string) → presigned UploadPart URL, bound to that part's exact length. */
  urls: Record<string, string>
}

/** POST {api}/list-parts (servers with `resumable` on): a presigned multipart ticket. */
export interface ListPartsRequest {
  ticket: string
}

/**
 * POST {api}/list-parts `{ ticket }` (servers with `resumable` on): the parts storage holds
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
export interface UploadResult<ServerData = unknown> {
  /** The object's URL, without any signature. */
  url: string
  bucket: string
  /** The object's key, as the upload API chose it. */
  key: string
  /** As storage reported it; empty when the store sends none (RGW's CompleteMultipartUpload). */
  etag: string
  /**
   * What the server's `onUploadComplete` returned, once the server verified the object. Absent
   * when the upload API has no such callback, or sends no ticket (a next-s3-upload route).
   */
  serverData?: ServerData
}

/**
 * POST {api}/complete, after storage accepted the bytes: the server verifies the object
 * against the ticket and calls `onUploadComplete`. `parts` for a multipart upload the upload API
 * created (presigned mode, or token mode's `createMultipart`), whose Complete the server sends; no
 * other field is read (metadata comes from the ticket).
 */
export interface CompleteRequest {
  ticket: string
  parts?: Array<{ partNumber: number; etag: string }>
}
/** Reply to {@link CompleteRequest}: the stored object. */
export type CompleteReply = UploadResult

/**
 * What a server's config says its upload metadata and `serverData` are, carried as a type only
 * (never a value): `createUploadHandler` returns a handler of this type, and a page in the same
 * TypeScript project passes `typeof handler` to `upload()` or the hooks to get both typed.
 */
export interface UploadTypes<Metadata = unknown, ServerData = unknown> {
  readonly '~updraft'?: { metadata: Metadata; serverData: ServerData }
}
/** The metadata a handler type validates; plain JSON when unknown. */
export type MetadataOf<Handler> =
  Handler extends UploadTypes<infer M, unknown> ? (unknown extends M ? JsonObject : M) : JsonObject
/** What a handler type's `onUploadComplete` returns; plain JSON when unknown. */
export type ServerDataOf<Handler> =
  Handler extends UploadTypes<unknown, infer S> ? (unknown extends S ? JsonValue : S) : JsonValue
/** A value that survives JSON: what `serverData` is when no handler type says more. */
export type JsonValue = string | number | boolean | null | JsonValue[] | JsonObject
/** A JSON object: what `metadata` is when no handler type says more. */
export type JsonObject = { [name: string]: JsonValue }

/** POST {api}/abort */
export interface AbortRequest {
  ticket: string
}
/** Reply to {@link AbortRequest}. */
export interface AbortReply {
  /** Always true: an upload already gone counts as aborted. */
  aborted: true
}

/**
 * GET {api}/info: which modes this server can serve, and with which store, so a page can
 * offer token mode only where it works. It carries nothing a presigned reply does not already
 * show the page: no keys, no role ARN.
 */
export interface InfoReply {
  /** Whether this server can issue token-mode credentials (it has an STS, and no `allowedTypes`). */
  token: boolean
  /** Why token mode is off; present exactly when `token` is false. */
  tokenUnavailableReason?: string
  /** Every server can presign: it needs only the access key it already has. */
  presigned: true
  /** The storage in use, for display: "AWS S3 (eu-west-1) · bucket uploads", … */
  store: string
  /** The upload API's `maxFileSize` in bytes, when set: a page refuses larger files before asking. */
  maxFileSize?: number
  /**
   * The upload API's `allowedTypes`, when set (`image/*`, `application/pdf`): a page's file picker
   * offers only these, and it refuses others before asking (protocol/file-limits.ts).
   */
  allowedTypes?: string[]
  /**
   * The most files `/batch` and `/batch/complete` take in one request (MAX_BATCH_FILES). Absent
   * from servers without the batch form (older ones, next-s3-upload routes): ask one file at a time.
   */
  maxBatchFiles?: number
}

/**
 * POST {api}/batch: several upload requests in one, for a page that has many files at once
 * (this server only: `InfoReply.maxBatchFiles` says a server takes it; the one-file form stays for
 * next-s3-upload's client and older servers). Each entry is the body `POST {api}` takes and is
 * judged as that route judges it — limits, `metadata`, `key`, its own ticket — so one refused
 * file never stops the others. `authorize` and cross-site refusal answer for the whole request.
 */
export interface BatchUploadRequest {
  /** 1..MAX_BATCH_FILES upload requests, each as `POST {api}` takes one. */
  files: UploadRequest[]
}
/** Reply to {@link BatchUploadRequest} (status 200 whatever each file's fate): `files[i]` answers `files[i]` of the request. */
export interface BatchUploadReply {
  /** One entry per file asked for: the one-file route's reply, or the file's refusal. */
  files: Array<TokenReply | PresignedReply | BatchError>
}

/**
 * POST {api}/batch/complete: several completions in one. Each entry is the body
 * `/complete` takes, verified as that route verifies it (a lying object is deleted and refused
 * alone), and `onUploadComplete` runs once per verified file.
 */
export interface BatchCompleteRequest {
  /** 1..MAX_BATCH_FILES completions, each as `/complete` takes one. */
  files: CompleteRequest[]
}
/** Reply to {@link BatchCompleteRequest} (status 200 whatever each file's fate): `files[i]` answers `files[i]`. */
export interface BatchCompleteReply<ServerData = unknown> {
  /** One entry per completion sent: the verified upload, or the file's refusal. */
  files: Array<UploadResult<ServerData> | BatchError>
}

/**
 * One file of a batch refused: the `{ error, code? }` the one-file route would have answered,
 * with its status. Only these entries have `error`.
 */
export interface BatchError extends ErrorReply {
  /** The status the one-file route answers the same refusal with: 400, 403, 404, 409, 413, 415, 422, 429, 500… */
  status: number
  /** With status 429 (the rate limit counts each file of a batch): seconds until the file may be asked for again. */
  retryAfter?: number
}

/** Any refusal: the client throws `error` as is. */
export interface ErrorReply {
  /** What to change, in plain words; the engine's `ApiError` carries it as its message. */
  error: string
  /** A refusal a client may act on by itself, named (the engine's `ApiError.code`). */
  code?: ErrorCode
}

/**
 * Refusals a client acts on without a person:
 * - `TokenModeUnavailable` answers an upload request for token mode on a server with no STS
 *   (400), and a page that did not name its strategy asks again in presigned mode.
 * - `ServerMisconfigured` (500): a setting of the server is wrong — storage refused its signature
 *   or key, its bucket does not exist, storage or STS could not be reached before either ever
 *   answered. No retry can heal it, so a page does not retry; `error` names the kind of fault,
 *   and the server's log the setting to change.
 */
export type ErrorCode = 'TokenModeUnavailable' | 'ServerMisconfigured'

/** Cache-Control next-s3-upload puts on objects: public in token mode, not in presigned mode. */
export const TOKEN_CACHE_CONTROL = 'max-age=630720000, public'
export const PRESIGNED_CACHE_CONTROL = 'max-age=630720000'
