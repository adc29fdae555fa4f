import { nodeTransport } from '../engine/transport/node-transport.ts'
import type { HttpRequest, Transport } from '../engine/transport/transport.ts'

/** One request as the engine put it on the wire (handed it to the transport), and what came back. */
export interface WireEntry {
  /** performance.now() when the engine handed the request to the transport. */
  at: number
  /** `PUT ?partNumber`, `POST ?uploads`, `DELETE ?uploadId`, … or an upload API route: `POST /`, `POST /parts`… */
  step: string
  /** The same logical request across its attempts: step, path and part (storage), or route and body (upload API). */
  key: string
  api: boolean
  status?: number
  /** S3's `<Code>`, or the upload API's JSON reply. */
  code?: string
  reply?: string
  /** The transport rejected: no reply (or cancelled). */
  failed?: string
}

/** Requests that may go out after an upload has settled: its cleanup, and the credentials cleanup needs. */
export const CLEANUP_STEPS = new Set(['DELETE ?uploadId', 'POST /abort', 'POST /duplicates', 'POST /refresh'])

/**
 * Wraps node:http (the engine's Node transport) to log every request the engine makes, in order,
 * with its outcome; `onRequest` may act at that moment (abort the upload, say).
 */
export function recordingTransport(
  apiOrigin: string,
  onRequest?: (entry: WireEntry, response?: Promise<unknown>) => void,
) {
  const log: WireEntry[] = []
  const transport: Transport = (request: HttpRequest) => {
    const entry = describe(request, apiOrigin)
    log.push(entry)
    const response = nodeTransport(request).then(
      (reply) => {
        entry.status = reply.status
        entry.reply = reply.body
        entry.code = entry.api ? reply.body.slice(0, 200) : /<Code>([^<]*)<\/Code>/.exec(reply.body)?.[1]
        return reply
      },
      (error: Error) => {
        entry.failed = error.name
        throw error
      },
    )
    onRequest?.(entry, response)
    return response
  }
  return { transport, log }
}

function describe(request: HttpRequest, apiOrigin: string): WireEntry {
  const url = new URL(request.url)
  const api = url.origin === apiOrigin
  if (api) {
    const last = url.pathname.replace(/\/+$/, '').split('/').pop()!
    const route = ['parts', 'complete', 'abort', 'refresh', 'duplicates'].includes(last) ? `/${last}` : '/'
    const step = `${request.method} ${route}`
    return { at: performance.now(), step, key: `${step} ${String(request.body)}`, api }
  }
  const marker = ['uploads', 'partNumber', 'uploadId'].find((name) => url.searchParams.has(name))
  const step = marker ? `${request.method} ?${marker}` : request.method
  return {
    at: performance.now(),
    step,
    key: `${step} ${url.pathname} ${url.searchParams.get('partNumber') ?? ''}`,
    api,
  }
}

/** Storage refused the request as signed: the engine renews the signature once, outside the retry count. */
const isRefusal = (entry: WireEntry) => !entry.api && (entry.status === 403 || /Expired|Skewed/.test(entry.code ?? ''))

/** Replies another try can fix (the engine's policy, restated here so the test does not grade it with itself). */
const isRetryableReply = (entry: WireEntry) =>
  entry.failed !== undefined ||
  entry.status! > 499 ||
  entry.status === 429 ||
  entry.status === 408 ||
  /^(RequestTimeout|InternalError)$/.test(entry.code ?? '')

/**
 * What the log shows against the retry policy: no logical request tried more than `maxAttempts`
 * times (a renewal after a refusal does not count), and none tried again after a reply that
 * another try cannot fix.
 */
export function retryViolations(log: WireEntry[], maxAttempts: number): string[] {
  const violations: string[] = []
  const byKey = new Map<string, WireEntry[]>()
  const renewals = new Map<string, number>()
  for (const entry of log) {
    // Refreshes are separate requests each time credentials are due, not retries of one.
    if (entry.step === 'POST /refresh') continue
    let key = entry.key
    if (entry.step === 'POST /parts') {
      // A part URL storage refused is asked for again, with the same body: after a 200, the next
      // such request is a renewal, a request of its own, not a retry of the answered one.
      key = `${entry.key} #${renewals.get(entry.key) ?? 0}`
      if (entry.status === 200) renewals.set(entry.key, (renewals.get(entry.key) ?? 0) + 1)
    }
    byKey.set(key, [...(byKey.get(key) ?? []), entry])
  }
  for (const [key, entries] of byKey) {
    const attempts = entries.filter((entry) => !isRefusal(entry)).length
    if (attempts > maxAttempts) violations.push(`${key}: ${attempts} attempts, over the budget of ${maxAttempts}`)
    entries.slice(0, -1).forEach((entry, i) => {
      if (!isRetryableReply(entry) && !isRefusal(entry)) {
        violations.push(`${key}: tried again after a final reply (${entry.status} ${entry.code}), attempt ${i + 1}`)
      }
    })
  }
  return violations
}
