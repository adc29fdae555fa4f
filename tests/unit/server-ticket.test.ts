// Tickets, every kind (multipart, token, single PUT): stateless, HMAC-signed, expiring; anything
// but an intact, current ticket of the expected kind for this bucket is a 403.
import { describe, expect, it } from 'vitest'
import { resolveConfig } from '../../server/config.ts'
import { type MultipartContext, readTicket } from '../../server/multipart.ts'
import { signTokenTicket, type TokenRoutesContext, verifyTokenTicket } from '../../server/refresh.ts'
import {
  deriveTicketSecret,
  signTicket,
  signUploadTicket,
  type Ticket,
  type TicketClaims,
  verifyTicket,
  verifyTicketOf,
} from '../../server/ticket.ts'
import { refusal } from '../helpers/refusal.ts'

const NOW = Date.UTC(2025, 0, 1)
const claims: TicketClaims = {
  bucket: 'uploads',
  key: 'next-s3-uploads/u/ünïcödé.bin',
  uploadId: 'upload+id/=',
  partSize: 5 * 1024 * 1024,
  filesize: 12 * 1024 * 1024,
  partCount: 3,
  contentType: 'image/png',
  metadata: { album: 'holiday', tags: ['a', 'b'] },
  issued: NOW / 1000,
  expires: NOW / 1000 + 60,
}
const multipart: Ticket = { kind: 'multipart', ...claims }
const SECRET = 'ticket-secret'

const verifying =
  (ticket: string, { secret = SECRET, bucket = 'uploads', now = NOW } = {}) =>
  () =>
    verifyTicket(ticket, secret, bucket, now)
const INVALID = { status: 403, message: 'The upload ticket is not valid' }
const OTHER_SECRET = {
  status: 403,
  message:
    "The upload ticket was not signed with this server's ticketSecret: if several instances serve this API, give them all the same S3_UPLOAD_TICKET_SECRET (ticketSecret)",
}
const EXPIRED = { status: 403, message: 'The upload ticket has expired: start the upload again' }

describe('tickets', () => {
  it.each<Ticket>([
    multipart,
    {
      kind: 'token',
      bucket: 'uploads',
      key: 'k',
      uploadId: 'minted',
      filesize: 10,
      contentType: 'image/png',
      issued: NOW / 1000,
      expires: NOW / 1000 + 60,
    },
    {
      kind: 'put',
      bucket: 'uploads',
      key: 'k',
      uploadId: 'minted',
      filesize: 0,
      contentType: 'text/plain',
      metadata: 'x',
      issued: NOW / 1000,
      expires: NOW / 1000 + 60,
    },
  ])('carry their kind and claims back intact: $kind', (ticket) => {
    expect(verifyTicket(signTicket(ticket, SECRET), SECRET, 'uploads', NOW)).toEqual(ticket)
  })

  it('refuse a changed claim, metadata included', () => {
    const [prefix, , signature] = signTicket(multipart, SECRET).split('.')
    const bigger = Buffer.from(JSON.stringify({ ...claims, filesize: claims.filesize * 10 })).toString('base64url')
    expect(refusal(verifying(`${prefix}.${bigger}.${signature}`))).toEqual(INVALID)
    const otherMetadata = Buffer.from(JSON.stringify({ ...claims, metadata: { album: 'theirs' } })).toString(
      'base64url',
    )
    expect(refusal(verifying(`${prefix}.${otherMetadata}.${signature}`))).toEqual(INVALID)
  })

  it('refuse a changed signature, another secret, another bucket', () => {
    const ticket = signTicket(multipart, SECRET)
    // The signature's last base64url character carries padding bits: change one in the middle.
    const [prefix, body, signature] = ticket.split('.')
    const flipped = signature!.slice(0, 5) + (signature![5] === 'A' ? 'B' : 'A') + signature!.slice(6)
    expect(refusal(verifying(`${prefix}.${body}.${flipped}`))).toEqual(INVALID)
    // Another secret is named, so that instances configured differently say why (issue 26).
    expect(refusal(verifying(ticket, { secret: 'other' }))).toEqual(OTHER_SECRET)
    expect(refusal(verifying(ticket, { bucket: 'other-bucket' }))).toEqual(INVALID)
  })

  it.each(['', 'v1', 'v1.', 'v1..', 'v2.e30.AAAA', 'v1.e30.AAAA.extra', 'not a ticket at all', 'v1.!!!.???'])(
    'refuse %j',
    (ticket) => {
      expect(refusal(verifying(ticket))).toEqual(INVALID)
    },
  )

  it('refuse a well-signed ticket whose claims are not all there', () => {
    const { partCount: _, ...partial } = multipart
    expect(refusal(verifying(signTicket(partial as Ticket, SECRET)))).toEqual(INVALID)
    const { uploadId: __, ...noId } = { ...multipart, kind: 'put' as const }
    expect(refusal(verifying(signTicket(noId as unknown as Ticket, SECRET)))).toEqual(INVALID)
  })

  it('one kind never passes for another: the kind is inside the MAC', () => {
    const ticket = signTicket(multipart, SECRET)
    expect(refusal(() => verifyTicketOf('token', ticket, SECRET, 'uploads', NOW))).toEqual(INVALID)
    expect(refusal(() => verifyTicketOf('put', ticket, SECRET, 'uploads', NOW))).toEqual(INVALID)
    // Relabelled: the same claims and signature under another kind's prefix.
    const [, body, signature] = ticket.split('.')
    expect(refusal(verifying(`tok1.${body}.${signature}`))).toEqual(INVALID)
    expect(refusal(verifying(`put1.${body}.${signature}`))).toEqual(INVALID)
  })

  it('expire', () => {
    const ticket = signTicket(multipart, SECRET)
    expect(verifyTicket(ticket, SECRET, 'uploads', claims.expires * 1000 - 1)).toEqual(multipart)
    expect(refusal(verifying(ticket, { now: claims.expires * 1000 }))).toEqual(EXPIRED)
  })

  it('are signed with a key derived from the S3 secret when none is configured: stable, and not the secret', () => {
    expect(deriveTicketSecret('s3-secret')).toBe(deriveTicketSecret('s3-secret'))
    expect(deriveTicketSecret('s3-secret')).not.toBe(deriveTicketSecret('other-secret'))
    expect(deriveTicketSecret('s3-secret')).not.toContain('s3-secret')
  })
})

describe('the routes’ readers: readTicket (multipart) and verifyTokenTicket (token)', () => {
  const config = resolveConfig({
    accessKeyId: 'AK',
    secretAccessKey: 'SK',
    bucket: 'uploads',
    region: 'us-east-1',
    ticketTtlSeconds: 600,
  })
  const tokenContext = { config, ticketSecret: SECRET } as TokenRoutesContext
  const multipartContext = { config, ticketSecret: SECRET } as MultipartContext

  it('a token ticket carries bucket, key, what was declared, a minted uploadId and its lifetime', () => {
    const declared = {
      key: 'next-s3-uploads/u/a.png',
      contentType: 'image/png',
      filesize: 10,
      metadata: { album: 'a' },
    }
    const ticket = signTokenTicket(tokenContext, declared, NOW)
    expect(ticket).toMatch(/^tok1\./)
    expect(verifyTokenTicket(tokenContext, ticket, NOW)).toEqual({
      ...declared,
      bucket: 'uploads',
      uploadId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      issued: NOW / 1000,
      expires: NOW / 1000 + 600,
    })
    // Each upload its own dedupe key.
    const again = verifyTokenTicket(tokenContext, signTokenTicket(tokenContext, declared, NOW), NOW)
    expect(again.uploadId).not.toBe(verifyTokenTicket(tokenContext, ticket, NOW).uploadId)
  })

  it('a token ticket: another secret, another bucket, expiry', () => {
    const ticket = signTokenTicket(tokenContext, 'mine.bin', NOW)
    expect(refusal(() => verifyTokenTicket({ ...tokenContext, ticketSecret: 'other' }, ticket, NOW))).toEqual(
      OTHER_SECRET,
    )
    expect(
      refusal(() => verifyTokenTicket({ ...tokenContext, config: { ...config, bucket: 'elsewhere' } }, ticket, NOW)),
    ).toEqual(INVALID)
    expect(refusal(() => verifyTokenTicket(tokenContext, ticket, NOW + 601_000))).toEqual(EXPIRED)
  })

  it('a multipart ticket is no token ticket, and a token ticket no multipart ticket', () => {
    expect(refusal(() => verifyTokenTicket(tokenContext, signTicket(multipart, SECRET), NOW))).toEqual(INVALID)
    expect(refusal(() => readTicket(multipartContext, signTokenTicket(tokenContext, 'k')))).toEqual(INVALID)
    const { kind: _, ...rest } = multipart
    expect(
      readTicket(multipartContext, signTicket({ ...multipart, expires: Math.floor(Date.now() / 1000) + 60 }, SECRET)),
    ).toEqual({
      ...rest,
      expires: expect.any(Number),
    })
  })
})

// Issue 14, uploads of unknown length: the flag is a claim like any other (inside the MAC), and
// its shape is checked, so a known-size ticket never turns into an unknown-size one or back.
describe('tickets of unknown size', () => {
  const { filesize: _, partCount: __, ...planless } = claims
  const unknown: Ticket = { kind: 'multipart', ...planless, sizeUnknown: true }
  const tokenUnknown: Ticket = {
    kind: 'token',
    bucket: 'uploads',
    key: 'k',
    uploadId: 'minted',
    contentType: 'image/png',
    sizeUnknown: true,
    issued: NOW / 1000,
    expires: NOW / 1000 + 60,
  }
  /** The ticket's own signature over claims someone rewrote. */
  const rewritten = (ticket: Ticket, change: (claims: Record<string, unknown>) => Record<string, unknown>) => {
    const [prefix, body, signature] = signTicket(ticket, SECRET).split('.')
    const claimed = JSON.parse(Buffer.from(body!, 'base64url').toString()) as Record<string, unknown>
    return `${prefix}.${Buffer.from(JSON.stringify(change(claimed))).toString('base64url')}.${signature}`
  }

  it.each([unknown, tokenUnknown])('carry the flag back intact: $kind', (ticket) => {
    expect(verifyTicket(signTicket(ticket, SECRET), SECRET, 'uploads', NOW)).toEqual(ticket)
  })

  it('refuse a known-size ticket altered to unknown size, and an unknown-size one given a size', () => {
    const toUnknown = ({ filesize: _f, partCount: _p, ...rest }: Record<string, unknown>) => ({
      ...rest,
      sizeUnknown: true,
    })
    expect(refusal(verifying(rewritten(multipart, toUnknown)))).toEqual(INVALID)
    expect(refusal(verifying(rewritten(multipart, (c) => ({ ...c, sizeUnknown: true }))))).toEqual(INVALID)
    const toKnown = ({ sizeUnknown: _s, ...rest }: Record<string, unknown>) => ({ ...rest, filesize: 1, partCount: 1 })
    expect(refusal(verifying(rewritten(unknown, toKnown)))).toEqual(INVALID)
    const token: Ticket = { ...tokenUnknown, sizeUnknown: undefined, filesize: 10 }
    expect(
      refusal(verifying(rewritten(token, ({ filesize: _f, ...rest }) => ({ ...rest, sizeUnknown: true })))),
    ).toEqual(INVALID)
    expect(
      refusal(verifying(rewritten(tokenUnknown, ({ sizeUnknown: _s, ...rest }) => ({ ...rest, filesize: 10 })))),
    ).toEqual(INVALID)
  })

  it('refuse well-signed claims that mix a size with the flag, or lack both, or flag a single PUT', () => {
    const signed = (ticket: object) => verifying(signTicket(ticket as Ticket, SECRET))
    expect(refusal(signed({ ...unknown, filesize: 10 }))).toEqual(INVALID)
    expect(refusal(signed({ ...unknown, partCount: 2 }))).toEqual(INVALID)
    expect(refusal(signed({ ...multipart, sizeUnknown: true }))).toEqual(INVALID)
    expect(refusal(signed({ ...unknown, sizeUnknown: undefined }))).toEqual(INVALID)
    expect(refusal(signed({ ...unknown, sizeUnknown: 'yes' }))).toEqual(INVALID)
    expect(refusal(signed({ ...tokenUnknown, filesize: 10 }))).toEqual(INVALID)
    expect(refusal(signed({ ...tokenUnknown, kind: 'put' }))).toEqual(INVALID)
  })
})

// Issue 16, token uploads the upload API created (`createMultipart`): the ticket names storage's
// UploadId and says the upload API created it, inside the MAC; only a token ticket may say so.
describe('token tickets of an upload the upload API created', () => {
  const config = resolveConfig({
    accessKeyId: 'AK',
    secretAccessKey: 'SK',
    bucket: 'uploads',
    region: 'us-east-1',
    ticketTtlSeconds: 600,
  })
  const declared = {
    key: 'next-s3-uploads/u/a.bin',
    contentType: 'application/octet-stream',
    filesize: 12 * 1024 * 1024,
  }
  const options = { bucket: 'uploads', ticketTtlSeconds: 600, ticketSecret: SECRET }

  it('carry storage’s UploadId as the dedupe key, and the claim', () => {
    const ticket = signUploadTicket('token', declared, options, NOW, 'storage-upload-id')
    expect(verifyTokenTicket({ config, ticketSecret: SECRET } as TokenRoutesContext, ticket, NOW)).toEqual({
      ...declared,
      bucket: 'uploads',
      uploadId: 'storage-upload-id',
      multipart: true,
      issued: NOW / 1000,
      expires: NOW / 1000 + 600,
    })
    // Not created: a minted id and no claim.
    expect(verifyTicket(signUploadTicket('token', declared, options, NOW), SECRET, 'uploads', NOW)).not.toHaveProperty(
      'multipart',
    )
  })

  it('refuse the claim added to a ticket, on another kind, or not exactly true', () => {
    const [prefix, body, signature] = signUploadTicket('token', declared, options, NOW).split('.')
    const claimed = JSON.parse(Buffer.from(body!, 'base64url').toString()) as Record<string, unknown>
    const added = `${prefix}.${Buffer.from(JSON.stringify({ ...claimed, multipart: true })).toString('base64url')}.${signature}`
    expect(refusal(verifying(added))).toEqual(INVALID)
    const signed = (ticket: object) => verifying(signTicket(ticket as Ticket, SECRET))
    expect(refusal(signed({ ...multipart, multipart: true }))).toEqual(INVALID)
    expect(
      refusal(
        signed({
          kind: 'put',
          ...declared,
          bucket: 'uploads',
          uploadId: 'u',
          multipart: true,
          issued: NOW / 1000,
          expires: NOW / 1000 + 60,
        }),
      ),
    ).toEqual(INVALID)
    expect(
      refusal(
        signed({
          kind: 'token',
          ...declared,
          bucket: 'uploads',
          uploadId: 'u',
          multipart: 'yes',
          issued: NOW / 1000,
          expires: NOW / 1000 + 60,
        }),
      ),
    ).toEqual(INVALID)
  })
})
