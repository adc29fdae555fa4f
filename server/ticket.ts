import { createHmac, timingSafeEqual } from 'node:crypto'
import { RequestError } from './request-error.ts'

/**
 * What every ticket vouches for. The server keeps no state between the upload request and the
 * routes after it (/parts, /complete, /abort, /refresh, /duplicates): everything they sign,
 * complete or hand to `onUploadComplete` comes from a ticket it issued, never from the body.
 */
export interface UploadClaims {
  bucket: string
  key: string
  /**
   * The upload's stable id, the dedupe key `onUploadComplete` gets: storage's UploadId for a
   * presigned multipart upload, else one minted when the ticket was issued.
   */
  uploadId: string
  /** Declared bytes; absent when the page declared none (next-s3-upload's client never does). */
  filesize?: number
  /**
   * The page said `sizeUnknown`: a stream whose length is known only at its end (`filesize` is
   * then absent). Inside the MAC like every claim, and checked by shape (parseClaims), so a
   * known-size ticket never passes for an unknown-size one or the other way round. `/complete`
   * then holds the stored size to `maxFileSize` instead of to a declared size.
   */
  sizeUnknown?: true
  /** The Content-Type issued for the object (canonical, protocol/content-type.ts). */
  contentType?: string
  /** The page's metadata after the `metadata` option validated it; absent when none. */
  metadata?: unknown
  /** Unix time, seconds. */
  issued: number
  expires: number
}

/** A presigned multipart upload: the plan /parts signs and /complete checks. */
export type TicketClaims = UploadClaims & { partSize: number } & (KnownSizePlan | UnknownSizePlan)

/** The declared size fixes the plan: `partCount` parts, each's length from it. */
interface KnownSizePlan {
  filesize: number
  partCount: number
  sizeUnknown?: undefined
}

/**
 * No size declared: parts of at most `partSize` bytes, numbered up to `maxPartNumber`
 * (protocol/parts.ts), each length given by the page at `/parts`.
 */
interface UnknownSizePlan {
  sizeUnknown: true
  filesize?: undefined
  partCount?: undefined
}

/**
 * Token mode: what /refresh, /duplicates and /complete act on. `multipart`: the upload API created
 * the multipart upload `uploadId` (the page asked, `createMultipart`), and /complete completes it.
 */
export type TokenTicketClaims = UploadClaims & { multipart?: true }
/** A presigned single PUT: what /complete acts on. */
export type PutTicketClaims = UploadClaims

export type Ticket =
  | ({ kind: 'multipart' } & TicketClaims)
  | ({ kind: 'token' } & TokenTicketClaims)
  | ({ kind: 'put' } & PutTicketClaims)
export type TicketKind = Ticket['kind']

/**
 * The kind is the ticket's first field and inside the MAC, so a ticket of one kind never passes
 * for another (a token ticket cannot sign parts, a multipart ticket cannot refresh credentials).
 */
const PREFIX: Record<TicketKind, string> = { multipart: 'v1', token: 'tok1', put: 'put1' }
const KIND_OF = new Map(Object.entries(PREFIX).map(([kind, prefix]) => [prefix, kind as TicketKind]))

/**
 * `{prefix}.{base64url(JSON claims)}.{base64url(HMAC-SHA256 of "{prefix}.{claims}")}`. Not
 * encrypted: the claims are what the page was already told or sent.
 */
export function signTicket({ kind, ...claims }: Ticket, secret: string): string {
  const payload = `${PREFIX[kind]}.${Buffer.from(JSON.stringify({ ...claims, [SECRET_ID]: secretId(secret) })).toString('base64url')}`
  return `${payload}.${mac(payload, secret).toString('base64url')}`
}

/** The ticket with its kind, or a 403 when it is forged, altered, expired or for another bucket. */
export function verifyTicket(ticket: string, secret: string, bucket: string, now = Date.now()): Ticket {
  const [prefix, claimsPart, signaturePart, ...rest] = ticket.split('.')
  const kind = KIND_OF.get(prefix!)
  if (!kind || !claimsPart || !signaturePart || rest.length > 0) throw invalid()
  const given = Buffer.from(signaturePart, 'base64url')
  const expected = mac(`${prefix}.${claimsPart}`, secret)
  // Constant time, so response timing does not reveal how much of a forged signature was right.
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    // Signed under another secret (its id says so): another instance, configured differently.
    const id = parseClaims(kind, claimsPart)?.[SECRET_ID]
    throw id !== undefined && id !== secretId(secret) ? otherSecret() : invalid()
  }

  const { [SECRET_ID]: _id, ...claims } = parseClaims(kind, claimsPart) ?? {}
  if (!claims.bucket || claims.bucket !== bucket) throw invalid()
  if ((claims.expires as number) * 1000 <= now)
    throw new RequestError(403, 'The upload ticket has expired: start the upload again')
  return { ...claims, kind } as Ticket
}

/** `verifyTicket`, refusing (403) a valid ticket of another kind. */
export function verifyTicketOf<K extends TicketKind>(
  kind: K,
  ticket: string,
  secret: string,
  bucket: string,
  now = Date.now(),
) {
  const verified = verifyTicket(ticket, secret, bucket, now)
  if (verified.kind !== kind) throw invalid()
  return verified as Extract<Ticket, { kind: K }>
}

/** The key tickets are signed with when no `ticketSecret` is configured: stable across instances sharing the S3 secret. */
export const deriveTicketSecret = (secretAccessKey: string) =>
  createHmac('sha256', secretAccessKey).update('updraft multipart ticket v1').digest('base64url')

/** The issue time and expiry of a ticket issued `now`. */
export function ticketLifetime(ttlSeconds: number, now = Date.now()) {
  const issued = Math.floor(now / 1000)
  return { issued, expires: issued + ttlSeconds }
}

/** What an upload request declared, bound into its ticket. */
export interface DeclaredUpload {
  key: string
  contentType?: string
  filesize?: number
  sizeUnknown?: true
  metadata?: unknown
}

/**
 * A single PUT's or token upload's ticket for `declared`, with a freshly minted uploadId (the
 * dedupe key); for a token upload whose multipart upload the upload API `created`, storage's UploadId.
 */
export function signUploadTicket(
  kind: 'put' | 'token',
  declared: DeclaredUpload,
  { bucket, ticketTtlSeconds, ticketSecret }: { bucket: string; ticketTtlSeconds: number; ticketSecret: string },
  now = Date.now(),
  created?: string,
): string {
  const uploadId = created ? { uploadId: created, multipart: true as const } : { uploadId: crypto.randomUUID() }
  return signTicket({ kind, ...declared, bucket, ...uploadId, ...ticketLifetime(ticketTtlSeconds, now) }, ticketSecret)
}

/** Clock difference allowed between this server and storage when judging when an object or upload was made. */
export const CLOCK_MARGIN_SECONDS = 300

const mac = (payload: string, secret: string) => createHmac('sha256', secret).update(payload).digest()

/**
 * Which secret signed a ticket, in the claims: 6 characters of an HMAC of the secret, which says
 * nothing about it, and lets an instance tell a ticket of an instance with another `ticketSecret`
 * (a deployment mistake, named in the 403) from a forged or altered one.
 */
const SECRET_ID = 'sid'
const secretId = (secret: string) =>
  createHmac('sha256', secret).update('updraft ticket secret id').digest('base64url').slice(0, 6)

const invalid = () => new RequestError(403, 'The upload ticket is not valid')
const otherSecret = () =>
  new RequestError(
    403,
    "The upload ticket was not signed with this server's ticketSecret: if several instances serve this API, give them all the same S3_UPLOAD_TICKET_SECRET (ticketSecret)",
  )

function parseClaims(kind: TicketKind, encoded: string): Record<string, unknown> | undefined {
  let claims: unknown
  try {
    claims = JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8'))
  } catch {
    return undefined
  }
  if (typeof claims !== 'object' || claims === null || Array.isArray(claims)) return undefined
  const fields = claims as Record<string, unknown>
  const isCount = (value: unknown) => Number.isSafeInteger(value) && (value as number) >= 0
  const strings = ['bucket', 'key', 'uploadId']
  const counts = kind === 'multipart' ? ['issued', 'expires', 'partSize'] : ['issued', 'expires']
  // Exactly one of a declared size or the unknown-size flag on a multipart ticket; the flag never
  // beside a size, and never on a single PUT's (its URL binds a size).
  const sizeUnknown = fields.sizeUnknown === true
  const sizeWellFormed =
    kind === 'multipart'
      ? sizeUnknown
        ? fields.filesize === undefined && fields.partCount === undefined
        : isCount(fields.filesize) && isCount(fields.partCount)
      : fields.filesize === undefined || (isCount(fields.filesize) && !sizeUnknown)
  const wellFormed =
    strings.every((name) => typeof fields[name] === 'string') &&
    counts.every((name) => isCount(fields[name])) &&
    (fields.sizeUnknown === undefined || (sizeUnknown && kind !== 'put')) &&
    // Only a token ticket names an upload the upload API created for the page to fill.
    (fields.multipart === undefined || (fields.multipart === true && kind === 'token')) &&
    sizeWellFormed &&
    (fields.contentType === undefined || typeof fields.contentType === 'string')
  return wellFormed ? fields : undefined
}
