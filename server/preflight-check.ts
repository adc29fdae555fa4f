// A browser's CORS preflight for a presigned URL, sent from the server: what decides whether a
// page can use the URL at all. Ceph RGW authenticates the preflight of a presigned URL (since
// ceph/ceph#52673, with Access-Control-Request-Method standing in for OPTIONS in the signature).
// For the server's own key it then ignores the signature (ceph/ceph#55458, in 16.2.15), but a URL
// signed by an STS session credential is still checked, against the preflight's own headers:
// a URL that signs any header a preflight cannot carry (Content-Type, Content-Length, x-amz-acl,
// …) gets 403 SignatureDoesNotMatch, with no Access-Control-Allow-Origin, and the browser never
// sends the PUT. Measured on 16.2.15: tests/presign-preflight.test.ts.
import { xmlText } from '../protocol/xml.ts'

export interface PreflightReply {
  status: number
  /** S3's `<Code>`, when the body holds one. */
  code?: string
  allowOrigin: string | null
}

/** Each preflight gives up after this long. */
const TIMEOUT_MS = 10_000

/** The OPTIONS request a browser sends before a PUT to `url` with `headers` (names only, as the browser lists them). */
export async function sendPreflight(
  url: string,
  origin: string,
  headers: readonly string[],
  method = 'PUT',
): Promise<PreflightReply> {
  const requestHeaders: Record<string, string> = { origin, 'access-control-request-method': method }
  if (headers.length > 0)
    requestHeaders['access-control-request-headers'] = headers
      .map((name) => name.toLowerCase())
      .sort()
      .join(',')
  const response = await fetch(url, {
    method: 'OPTIONS',
    headers: requestHeaders,
    signal: AbortSignal.timeout(TIMEOUT_MS),
  })
  const code = xmlText(await response.text(), 'Code')
  return {
    status: response.status,
    ...(code ? { code } : {}),
    allowOrigin: response.headers.get('access-control-allow-origin'),
  }
}

/** What storage answers when it checks a signature it cannot verify, or an identity it refuses (RGW says AccessDenied for both). */
const AUTH_CODES = ['SignatureDoesNotMatch', 'AccessDenied', 'InvalidAccessKeyId', 'InvalidToken']

/**
 * Whether storage refuses the preflight of a session-signed URL for a reason that the same URL
 * signed by the server's key does not meet: it authenticates preflights of session-signed URLs.
 * A CORS rule that refuses the origin refuses both alike, and says nothing about the signer.
 */
export function refusesSessionPreflight(session: PreflightReply, serverKey: PreflightReply): boolean {
  if (session.status < 300) return false
  if (!AUTH_CODES.includes(session.code ?? '')) return false
  return serverKey.code !== session.code
}

/** Storage said this about a preflight, in words: `403 SignatureDoesNotMatch`. */
export const describePreflight = ({ status, code }: PreflightReply) => `${status}${code ? ` ${code}` : ''}`
