import { MAX_BODY_BYTES } from '../protocol/limits.ts'
import type { ErrorCode } from '../protocol/wire.ts'

/**
 * A refusal the client caused: the handler answers it as `{ error: message }` with `status`, and
 * never logs it as a fault. Throw one from your `key` callback to refuse a request with your own
 * status and words (`authorize` refuses by returning false: 403).
 *
 * @example
 * ```ts
 * createUploadHandler({
 *   key: (request, filename, body) => {
 *     if (typeof body.albumId !== 'string') throw new RequestError(400, 'albumId is required: send it in apiBody')
 *     return `albums/${body.albumId}/${crypto.randomUUID()}/${sanitizeFilename(filename)}`
 *   },
 * })
 * ```
 */
export class RequestError extends Error {
  override name = 'RequestError'
  /** The HTTP status answered: 400, 403, 413, 415, 429, … */
  readonly status: number
  /** Sent beside `error` when a client may act on the refusal by itself (`ErrorReply.code`). */
  readonly code: ErrorCode | undefined

  constructor(status: number, message: string, code?: ErrorCode) {
    super(message)
    this.status = status
    this.code = code
  }
}

/** A rate limit said to wait (`throttle`, the Fastify plugin's `rateLimit`): 429 with Retry-After. */
export class ThrottledError extends RequestError {
  override name = 'ThrottledError'
  /** Whole seconds to wait, at least 1. */
  readonly seconds: number

  constructor(seconds: number) {
    const whole = Math.max(1, Math.ceil(seconds))
    super(429, `Too many requests: try again in ${whole} s`)
    this.seconds = whole
  }
}

/** The refusals several modules make, worded once. */
export const badRequest = (message: string) => new RequestError(400, message)
export const notAuthorized = () => new RequestError(403, 'Not authorized to upload')
export const bodyTooLarge = () => new RequestError(413, `Request body must be at most ${MAX_BODY_BYTES} bytes`)

/** A short, safe rendering of what the client sent, for error messages. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing'
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (typeof value === 'object') return 'an object'
  if (typeof value === 'string')
    return value.length > 40 ? `a string of ${value.length} characters` : JSON.stringify(value)
  return `${typeof value} ${String(value)}`
}
