// Multipart tickets: stateless, HMAC-signed, expiring; anything but an intact, current ticket for
// this bucket is a 403.
import { describe, expect, it } from 'vitest'
import { deriveTicketSecret, signTicket, verifyTicket, type TicketClaims } from '../../server/ticket.ts'
import { RequestError } from '../../protocol/validate.ts'

const NOW = Date.UTC(2025, 0, 1)
const claims: TicketClaims = {
  bucket: 'uploads',
  key: 'next-s3-uploads/u/ünïcödé.bin',
  uploadId: 'upload+id/=',
  partSize: 5 * 1024 * 1024,
  filesize: 12 * 1024 * 1024,
  partCount: 3,
  expires: NOW / 1000 + 60,
}
const SECRET = 'ticket-secret'

function refusal(ticket: string, { secret = SECRET, bucket = 'uploads', now = NOW } = {}) {
  try {
    verifyTicket(ticket, secret, bucket, now)
  } catch (error) {
    expect(error).toBeInstanceOf(RequestError)
    return { status: (error as RequestError).status, message: (error as RequestError).message }
  }
  throw new Error('the ticket was accepted')
}
const INVALID = { status: 403, message: 'The upload ticket is not valid' }

describe('tickets', () => {
  it('carry their claims back intact', () => {
    expect(verifyTicket(signTicket(claims, SECRET), SECRET, 'uploads', NOW)).toEqual(claims)
  })

  it('refuse a changed claim', () => {
    const [version, , signature] = signTicket(claims, SECRET).split('.')
    const bigger = Buffer.from(JSON.stringify({ ...claims, filesize: claims.filesize * 10 })).toString('base64url')
    expect(refusal(`${version}.${bigger}.${signature}`)).toEqual(INVALID)
  })

  it('refuse a changed signature, another secret, another bucket', () => {
    const ticket = signTicket(claims, SECRET)
    const last = ticket.at(-1) === 'A' ? 'B' : 'A'
    expect(refusal(ticket.slice(0, -1) + last)).toEqual(INVALID)
    expect(refusal(ticket, { secret: 'other' })).toEqual(INVALID)
    expect(refusal(ticket, { bucket: 'other-bucket' })).toEqual(INVALID)
  })

  it.each(['', 'v1', 'v1.', 'v1..', 'v2.e30.AAAA', 'v1.e30.AAAA.extra', 'not a ticket at all', 'v1.!!!.???'])('refuse %j', (ticket) => {
    expect(refusal(ticket)).toEqual(INVALID)
  })

  it('refuse a well-signed ticket whose claims are not all there', () => {
    const { partCount: _, ...partial } = claims
    expect(refusal(signTicket(partial as TicketClaims, SECRET))).toEqual(INVALID)
  })

  it('expire', () => {
    const ticket = signTicket(claims, SECRET)
    expect(verifyTicket(ticket, SECRET, 'uploads', claims.expires * 1000 - 1)).toEqual(claims)
    expect(refusal(ticket, { now: claims.expires * 1000 })).toEqual({ status: 403, message: 'The upload ticket has expired: start the upload again' })
  })

  it('are signed with a key derived from the S3 secret when none is configured: stable, and not the secret', () => {
    expect(deriveTicketSecret('s3-secret')).toBe(deriveTicketSecret('s3-secret'))
    expect(deriveTicketSecret('s3-secret')).not.toBe(deriveTicketSecret('other-secret'))
    expect(deriveTicketSecret('s3-secret')).not.toContain('s3-secret')
  })
})
