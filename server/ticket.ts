import { createHmac, timingSafeEqual } from 'node:crypto'
import { RequestError } from '../protocol/validate.ts'

/**
 * What a multipart ticket vouches for. The server keeps no state between /parts, /complete and
 * /abort: everything it signs or completes comes from a ticket it issued, never from the body.
 */
export interface TicketClaims {
  bucket: string
  key: string
  uploadId: string
  partSize: number
  filesize: number
  partCount: number
  /** Unix time, seconds. */
  expires: number
}

const VERSION = 'v1'

/**
 * `v1.{base64url(JSON claims)}.{base64url(HMAC-SHA256 of "v1.{claims}")}`. Not encrypted: the
 * claims are what the client was already told.
 */
export function signTicket(claims: TicketClaims, secret: string): string {
  const payload = `${VERSION}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`
  return `${payload}.${mac(payload, secret).toString('base64url')}`
}

/** The ticket's claims, or a 403 when it is forged, altered, expired or for another bucket. */
export function verifyTicket(ticket: string, secret: string, bucket: string, now = Date.now()): TicketClaims {
  const [version, claimsPart, signaturePart, ...rest] = ticket.split('.')
  if (version !== VERSION || !claimsPart || !signaturePart || rest.length > 0) throw invalid()
  const given = Buffer.from(signaturePart, 'base64url')
  const expected = mac(`${version}.${claimsPart}`, secret)
  // Constant time, so response timing does not reveal how much of a forged signature was right.
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalid()

  const claims = parseClaims(claimsPart)
  if (!claims || claims.bucket !== bucket) throw invalid()
  if (claims.expires * 1000 <= now) throw new RequestError(403, 'The upload ticket has expired: start the upload again')
  return claims
}

/** The key tickets are signed with when no `ticketSecret` is configured: stable across instances sharing the S3 secret. */
export const deriveTicketSecret = (secretAccessKey: string) =>
  createHmac('sha256', secretAccessKey).update('updraft multipart ticket v1').digest('base64url')

const mac = (payload: string, secret: string) => createHmac('sha256', secret).update(payload).digest()

const invalid = () => new RequestError(403, 'The upload ticket is not valid')

function parseClaims(encoded: string): TicketClaims | undefined {
  let claims: Record<string, unknown>
  try {
    claims = JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8')) as Record<string, unknown>
  } catch {
    return undefined
  }
  const strings = ['bucket', 'key', 'uploadId'] as const
  const numbers = ['partSize', 'filesize', 'partCount', 'expires'] as const
  const wellFormed =
    typeof claims === 'object' &&
    claims !== null &&
    strings.every((name) => typeof claims[name] === 'string') &&
    numbers.every((name) => Number.isSafeInteger(claims[name]))
  return wellFormed ? (claims as unknown as TicketClaims) : undefined
}
