import { DEFAULT_API_PATH } from '../../protocol/wire.ts'
import { ApiError } from '../core/errors.ts'
import type { UploadRun } from '../core/run.ts'
import type { PostOnce } from '../core/run-hooks.ts'
import { exchange } from './exchange.ts'
import { withRetries } from './retry.ts'

/**
 * POSTs JSON to the upload API (the `api` option, or one of its sub-routes) through the upload's transport, with the
 * retries, stall watchdog and typed errors of storage requests: a reply with an `error` field, or
 * any non-2xx, is an `ApiError` carrying that text as is (5xx, 429 and 408 are retried).
 * `signal`: the caller's, or a cleanup deadline, or none (a refresh cleanup may need too).
 * `linger`: as `SendOptions.linger`, for the request that makes the upload API create an upload.
 * A run's `post` hook may answer an attempt instead (the React layer's batches, src/batch-api.ts).
 */
export function postToApi<T>(
  run: UploadRun,
  route: string,
  body: unknown,
  signal: AbortSignal | undefined,
  linger?: boolean,
): Promise<T> {
  return withRetries(
    run,
    signal,
    () =>
      (run.hooks.post?.(run, route, body, postOnce as PostOnce) ??
        postOnce(run, route, body, linger ? undefined : signal)) as Promise<T>,
  )
}

/** One attempt of {@link postToApi}: no retries. */
export async function postOnce<T>(
  run: UploadRun,
  route: string,
  body: unknown,
  signal: AbortSignal | undefined,
): Promise<T> {
  const { api = DEFAULT_API_PATH, apiHeaders } = run.options
  const request = {
    method: 'POST',
    url: api.replace(/\/$/, '') + route,
    headers: { 'content-type': 'application/json', ...apiHeaders },
    body: JSON.stringify(body),
  }
  const response = await exchange(run, request, signal, undefined, 'api')
  let reply: (T & { error?: unknown; code?: unknown }) | undefined
  try {
    reply = JSON.parse(response.body)
  } catch {
    // Not JSON: a proxy's error page, or the upload API's plain-text 500.
  }
  if (reply?.error !== undefined || response.status > 299 || !reply) {
    // The upload API's own words when it sent some; else which URL answered what (a proxy's HTML
    // error page, a 404 from a wrong `api`), with a plain-text body's first words.
    const text = response.body.slice(0, 200)
    throw new ApiError(
      String(
        reply?.error ??
          `Upload API ${request.url} answered HTTP ${response.status}${/^[^<]/.test(text) ? `: ${text}` : ''}`,
      ),
      response.status,
      response.header('retry-after'),
      typeof reply?.code === 'string' ? reply.code : undefined,
    )
  }
  return reply
}
