import { NetworkError, S3Error, UploadAbortedError } from './errors.ts'

const BASE_DELAY_MS = 200
const MAX_DELAY_MS = 20_000

/** Only failures that another try can fix: no reply at all, 5xx, 429 (and 503 SlowDown). Never other 4xx. */
export function isRetryable(error: unknown): boolean {
  if (error instanceof NetworkError) return true
  if (error instanceof S3Error) return error.status >= 500 || error.status === 429
  return false
}

/**
 * Milliseconds to wait before retry number `attempt` (1-based): the server's `Retry-After`
 * seconds when it sent them (S3 never sends the HTTP-date form), else "full jitter" exponential
 * backoff (https://aws.amazon.com/blogs/architecture/exponential-backoff-and-jitter/).
 */
export function retryDelay(attempt: number, retryAfter?: string | null, random = Math.random): number {
  const asked = Number(retryAfter || NaN) * 1000
  return Math.min(asked >= 0 ? asked : Math.floor(random() * BASE_DELAY_MS * 2 ** attempt), MAX_DELAY_MS)
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new UploadAbortedError())
    const onAbort = () => {
      clearTimeout(timer)
      reject(new UploadAbortedError())
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}

/**
 * Calls `attemptOnce(attempt)` up to `attempts` times while it fails with a retryable error.
 * Nothing is retried once `signal` has aborted.
 */
export async function withRetries<T>(
  attempts: number,
  signal: AbortSignal | undefined,
  attemptOnce: (attempt: number) => Promise<T>,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      if (signal?.aborted) throw new UploadAbortedError()
      return await attemptOnce(attempt)
    } catch (error) {
      if (signal?.aborted) throw new UploadAbortedError()
      if (attempt >= attempts || !isRetryable(error)) throw error
      await sleep(retryDelay(attempt, error instanceof S3Error ? error.retryAfter : null), signal)
    }
  }
}
