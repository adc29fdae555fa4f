import type { HttpResponse } from './http.ts'

/** Base class of every error the engine throws on purpose; `isUploadError` tells them apart. */
export class UploadError extends Error {
  override name = 'UploadError'
}

/** An error reply from S3 (or an S3-compatible store), with the store's own `Code`. */
export class S3Error extends UploadError {
  override name = 'S3Error'
  /** S3's error code, e.g. `NoSuchBucket`, `AccessDenied`, `EntityTooSmall`; `Http403` when the reply had no body. */
  declare readonly code: string
  /** The reply's HTTP status. */
  declare readonly status: number
  /** Storage's request id (`<RequestId>` or `x-amz-request-id`), for its operator's logs. */
  declare readonly requestId: string | undefined
  /** The `Retry-After` header of a 429/503 reply, honoured by the retry policy. */
  declare readonly retryAfter: string | null
  /** Storage's clock: `<ServerTime>` of the reply, else its `Date` header (hidden by CORS unless exposed). */
  declare readonly serverTime: string | null
  /** The reply as received, for what the fields above do not carry (`x-amz-bucket-region`, `<Region>`…). */
  declare readonly response: HttpResponse | undefined

  constructor(
    code: string,
    message: string,
    status: number,
    requestId?: string,
    retryAfter: string | null = null,
    serverTime: string | null = null,
    response?: HttpResponse,
  ) {
    super(`${code}: ${message} (HTTP ${status}${requestId ? `, request id ${requestId}` : ''})`)
    Object.assign(this, { code, status, requestId, retryAfter, serverTime, response })
  }
}

/**
 * Your upload API (the `api` option: the server's `createUploadHandler`) refused or failed;
 * `message` is its own `error` text, as is. 5xx, 429 and 408 are retried; other refusals are final.
 */
export class ApiError extends UploadError {
  override name = 'ApiError'
  /** The API's HTTP status: 4xx for a refusal (400 bad request, 403, 413 too large, 415 type), 5xx for a failure. */
  declare readonly status: number
  /** The `Retry-After` header of a 429/503 reply (the API's throttle sends one), honoured by the retry policy. */
  declare readonly retryAfter: string | null
  /** The reply's `code`, for a refusal the engine may act on (`TokenModeUnavailable`); undefined for most. */
  declare readonly code: string | undefined

  constructor(message: string, status: number, retryAfter: string | null = null, code?: string) {
    super(message)
    Object.assign(this, { status, retryAfter, code })
  }
}

/**
 * The request never got an HTTP reply (offline, DNS, a refused connection, CORS refusal, connection
 * reset), or stalled: nothing moved for `stallTimeout`. Retried.
 */
export class NetworkError extends UploadError {
  override name = 'NetworkError'
  /**
   * Whom the request went to: your upload API or storage; set by the engine as the error leaves the
   * request (undefined when a transport is called directly).
   */
  declare readonly to: 'api' | 'storage' | undefined
  /** The origin it went to, never its path or query (presigned URLs carry signatures). */
  declare readonly origin: string | undefined
}

/** Rejection of an upload stopped through its AbortSignal. The name matches DOM `AbortError`. */
export class UploadAbortedError extends UploadError {
  override name = 'AbortError'

  constructor() {
    super('Upload aborted')
  }
}

/**
 * A stream body (a `ReadableStream` or async iterable) failed while the engine read it, or gave
 * more or fewer bytes than its declared `size`, or more than 10 000 parts. The upload stops and,
 * like any failure, aborts its multipart upload on storage. `cause`: the stream's own error.
 */
export class BodyError extends UploadError {
  override name = 'BodyError'
  /** Bytes read from the stream before it failed. */
  declare readonly received: number

  constructor(message: string, received: number, options?: ErrorOptions) {
    super(message, options)
    Object.assign(this, { received })
  }
}

/**
 * Whether `error` is one the engine reports on purpose (an {@link UploadError}: storage, the
 * endpoint, the network, an abort), as opposed to a bug such as a `TypeError` naming a bad option.
 *
 * @example
 * ```ts
 * try {
 *   await upload(file)
 * } catch (error) {
 *   if (!isUploadError(error)) throw error
 *   if (error.name !== 'AbortError') showMessage(error.message)
 * }
 * ```
 */
export const isUploadError = (error: unknown): error is UploadError => error instanceof UploadError

/** Cross-origin replies hide every header not listed in the bucket's CORS `ExposeHeaders`. */
export const missingETag = (partNumber: number) =>
  new UploadError(
    `Part ${partNumber} was uploaded but its ETag is not readable: add "ETag" to the bucket's CORS ExposeHeaders`,
  )
