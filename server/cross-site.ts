import { RequestError } from './request-error.ts'

/**
 * Who may call the upload API from a browser: pages of its own origin, and the origins listed in
 * `allowedOrigins`. Servers send neither `Origin` nor `Sec-Fetch-Site` and are not affected.
 *
 * Browsers label every request: `Sec-Fetch-Site` (https://w3c.github.io/webappsec-fetch-metadata/)
 * says whether the page that made it is same-origin, same-site (another port or subdomain:
 * cookies still go along) or cross-site; `Origin` names that page, and is all older browsers send.
 */
export function crossSiteRefusal(request: Request, allowedOrigins: readonly string[] = []): RequestError | undefined {
  const origin = request.headers.get('origin')
  if (origin !== null && allowedOrigins.includes(origin)) return undefined
  const site = request.headers.get('sec-fetch-site')
  if (site === 'same-origin' || site === 'none') return undefined
  if (site === null && (origin === null || isOwnOrigin(request, origin))) return undefined
  const who = origin === null ? `a ${site} page` : `a page at ${origin === 'null' ? 'an opaque origin' : origin}`
  return new RequestError(
    403,
    `Cross-site request refused: ${who} may not call this upload API; to allow an origin, add it to allowedOrigins`,
  )
}

/**
 * `Origin` against the request's own host. Scheme is not compared: behind a proxy that ends TLS
 * the handler sees http:// while the page was https://. The Host header is what the browser
 * addressed; `request.url` may have been rebuilt by a framework.
 */
function isOwnOrigin(request: Request, origin: string): boolean {
  let host: string
  try {
    host = new URL(origin).host
  } catch {
    return false
  }
  return host === new URL(request.url).host || host === request.headers.get('host')
}

/** CORS headers for a response to an allowed origin's page; none for anyone else. */
export function corsHeaders(request: Request, allowedOrigins: readonly string[] = []): Record<string, string> {
  const origin = request.headers.get('origin')
  if (origin === null || !allowedOrigins.includes(origin)) return {}
  // Credentials: the listed origins are trusted by configuration, and `authorize` may read their cookies.
  return { 'access-control-allow-origin': origin, 'access-control-allow-credentials': 'true', vary: 'Origin' }
}

/**
 * The answer to a CORS preflight (OPTIONS): allowed origins may POST JSON (and GET /info) with
 * the headers they asked for; everyone else gets 403, so the browser never sends the request.
 */
export function preflight(request: Request, allowedOrigins: readonly string[] = []): Response {
  const cors = corsHeaders(request, allowedOrigins)
  if (!cors['access-control-allow-origin']) {
    return Response.json(
      { error: 'Cross-origin request refused: add this origin to allowedOrigins to allow it' },
      { status: 403, headers: { 'cache-control': 'no-store', vary: 'Origin' } },
    )
  }
  // Header names only (RFC 9110 tokens, comma-separated): anything else is not echoed.
  const asked = request.headers.get('access-control-request-headers') ?? ''
  const allowHeaders = /^[!#$%&'*+\-.^_`|~0-9A-Za-z, \t]*$/.test(asked) ? asked : 'content-type'
  return new Response(null, {
    status: 204,
    headers: {
      ...cors,
      'access-control-allow-methods': 'POST, GET',
      'access-control-allow-headers': allowHeaders || 'content-type',
      'access-control-max-age': '600',
      'cache-control': 'no-store',
    },
  })
}
