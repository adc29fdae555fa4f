import { callBack, onAbort } from '../core/callback.ts'
import { ApiError, NetworkError, S3Error, UploadAbortedError, UploadError } from '../core/errors.ts'
import { abortCancels, isHeld, type UploadRun } from '../core/run.ts'

/** Backoff never waits longer than this between two attempts… */
const MAX_BACKOFF_MS = 10_000
/** …unless the server asked for more with Retry-After, which is honoured up to this. */
const MAX_RETRY_AFTER_MS = 20_000

/**
 * Only failures that another try can fix: no reply at all (or a stall), 5xx, 429 (and 503
 * SlowDown), 408, S3's 400 `RequestTimeout` ("your socket connection was not read from or written
 * to within the timeout period"), an `InternalError` inside a 200 (Complete can fail after its
 * headers are sent) and `BadDigest` (the body storage received does not match the checksum it
 * carries: damaged on the way, so sending it again can succeed). Never other 4xx, never an upload
 * API's `ServerMisconfigured`, never programming errors.
 */
export function isRetryable(error: unknown): boolean {
  if (error instanceof NetworkError) return true
  if (!(error instanceof S3Error || error instanceof ApiError)) return false
  const { status } = error
  // The upload API's settings are wrong (protocol/wire.ts ErrorCode): asking again changes nothing.
  if ((error as ApiError).code === 'ServerMisconfigured') return false
  return (
    status > 499 ||
    status === 429 ||
    status === 408 ||
    /^(RequestTimeout|InternalError|BadDigest)$/.test((error as S3Error).code)
  )
}

/**
 * Milliseconds to wait before retry number `retry` (1-based): the server's `Retry-After` seconds
 * when it sent them (S3 never sends the HTTP-date form), else exponential backoff with "equal
 * jitter" (https://aws.amazon.com/blogs/architecture/exponential-backoff-and-jitter/): half the
 * step fixed, half random. Unlike full jitter this guarantees a least total wait, so the default
 * budget always outlasts a network blip of several seconds.
 */
export function retryDelay(retry: number, base: number, retryAfter?: string | null, random = Math.random): number {
  const asked = Number(retryAfter || NaN) * 1000
  if (asked >= 0) return Math.min(asked, MAX_RETRY_AFTER_MS)
  const step = Math.min(base * 2 ** (retry - 1), MAX_BACKOFF_MS)
  return Math.floor(step / 2 + (random() * step) / 2)
}

/** Waits `ms`; rejects (the caller says why) as soon as `signal` or `held` aborts. */
function sleep(ms: number, signal: AbortSignal | undefined, held: AbortSignal | undefined): Promise<void> {
  let stops: Array<() => void> = []
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms)
    const stop = () => {
      clearTimeout(timer)
      reject()
    }
    stops = [onAbort(signal, stop), onAbort(held, stop)]
  }).finally(() => {
    for (const stop of stops) stop()
  })
}

/**
 * Calls `attemptOnce()` again, up to `retry.limit` times, while it fails in a way worth retrying
 * (`retry.shouldRetry`, else {@link isRetryable}). Once
 * `signal` aborts nothing new starts, except while committing: then the outcome must be known
 * before the upload reports, so one more attempt may start after the abort, at once.
 * `held` (body requests, with a `pauseSignal`): its abort ends the request with its reason,
 * backoff included, so no retry is spent while paused. Network errors past the budget go to the
 * `lost` hook (`waitForNetwork`), which may let the request try again with a fresh budget.
 */
export async function withRetries<T>(
  run: UploadRun,
  signal: AbortSignal | undefined,
  attemptOnce: () => Promise<T>,
  held?: AbortSignal,
): Promise<T> {
  const { retry, onRetry } = run.options
  let afterAbort = 0
  for (let attempt = 1; ; attempt++) {
    try {
      if (signal?.aborted && (abortCancels(run, signal) || afterAbort++)) throw new UploadAbortedError()
      if (isHeld(run, held)) throw held!.reason
      return await attemptOnce()
    } catch (error) {
      if (signal?.aborted && abortCancels(run, signal)) throw new UploadAbortedError()
      // The caller's predicate sees the engine's own errors only: a bug (a TypeError) is never
      // retried, nor a hold (its reason is no UploadError).
      if (!(error instanceof UploadError && (retry.shouldRetry?.(error, attempt) ?? isRetryable(error)))) throw error
      if (attempt > retry.limit) {
        if (!run.hooks.lost) throw error
        await run.hooks.lost(error, signal, held)
        attempt = 0
        continue
      }
      const delay = retryDelay(attempt, retry.delay, (error as ApiError).retryAfter)
      callBack(onRetry, { attempt, delay, error })
      await sleep(delay, signal, held).catch(() => {
        if (isHeld(run, held)) throw held!.reason
        if (abortCancels(run, signal)) throw new UploadAbortedError()
      })
    }
  }
}
