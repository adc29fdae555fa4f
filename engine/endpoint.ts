import { DEFAULT_ENDPOINT } from '../protocol/wire.ts'
import { EndpointError } from './errors.ts'

/** Where and how to reach the credential endpoint. */
export interface EndpointOptions {
  /** @default '/api/s3-upload'; absolute URLs allowed */
  endpoint?: string
  /** Sent to the endpoint only, never to storage (e.g. an Authorization header or CSRF token). */
  headers?: Record<string, string>
  signal?: AbortSignal
}

/**
 * POSTs JSON to the endpoint (or to one of its sub-routes) and returns the reply. Any reply with
 * an `error` field is thrown as an `EndpointError` carrying that text as is.
 */
export async function postToEndpoint<T>(options: EndpointOptions, route: string, body: unknown): Promise<T> {
  const url = (options.endpoint ?? DEFAULT_ENDPOINT).replace(/\/$/, '') + route
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...options.headers },
    body: JSON.stringify(body),
    signal: options.signal ?? null,
  })
  const text = await response.text()
  let reply: (T & { error?: unknown }) | undefined
  try {
    reply = JSON.parse(text)
  } catch {
    // Not JSON: a proxy's error page, or the endpoint's plain-text 500.
  }
  if (reply?.error !== undefined || !response.ok || !reply) {
    throw new EndpointError(
      String(reply?.error ?? (text.slice(0, 200) || `Upload endpoint answered HTTP ${response.status}`)),
      response.status,
    )
  }
  return reply
}
