import { createHmac, timingSafeEqual } from 'node:crypto'
import { AbortMultipartUploadCommand, ListMultipartUploadsCommand, type S3Client } from '@aws-sdk/client-s3'
import { parseAbortRequest, RequestError } from '../protocol/validate.ts'
import type { DuplicatesReply, RefreshReply } from '../protocol/wire.ts'
import type { ResolvedConfig } from './config.ts'
import type { IssueToken } from './sts.ts'

/**
 * Token mode's routes after the upload request: `/refresh` (fresh credentials before the old
 * ones expire) and `/duplicates` (abort the uploads a retried CreateMultipartUpload left). Both
 * act on the key of a token ticket this server signed, never on a key the page names.
 */
export interface TokenRoutesContext {
  config: ResolvedConfig
  s3: S3Client
  issueToken: IssueToken
  ticketSecret: string
}

/** What a token ticket vouches for. */
interface TokenTicketClaims {
  bucket: string
  key: string
  /** Unix time, seconds. */
  issued: number
  expires: number
}

/**
 * `tok1.{base64url(JSON claims)}.{base64url(HMAC-SHA256 of "tok1.{claims}")}`. Its own prefix
 * is inside the MAC, so a multipart ticket (`v1.`) never passes for a token ticket, nor the
 * reverse.
 */
const VERSION = 'tok1'

/** Clock difference allowed between this server and storage when judging upload start times. */
const CLOCK_MARGIN_SECONDS = 300

export function signTokenTicket({ config, ticketSecret }: TokenRoutesContext, key: string, now = Date.now()): string {
  const issued = Math.floor(now / 1000)
  const claims: TokenTicketClaims = { bucket: config.bucket, key, issued, expires: issued + config.ticketTtlSeconds }
  const payload = `${VERSION}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`
  return `${payload}.${mac(payload, ticketSecret).toString('base64url')}`
}

/** The claims, or a 403 when the ticket is forged, altered, expired, for another bucket or not a token ticket. */
export function verifyTokenTicket({ config, ticketSecret }: TokenRoutesContext, ticket: string, now = Date.now()): TokenTicketClaims {
  const [version, claimsPart, signaturePart, ...rest] = ticket.split('.')
  if (version !== VERSION || !claimsPart || !signaturePart || rest.length > 0) throw invalid()
  const given = Buffer.from(signaturePart, 'base64url')
  const expected = mac(`${version}.${claimsPart}`, ticketSecret)
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalid()
  let claims: TokenTicketClaims
  try {
    claims = JSON.parse(Buffer.from(claimsPart, 'base64url').toString('utf8'))
  } catch {
    throw invalid()
  }
  if (claims?.bucket !== config.bucket || typeof claims.key !== 'string') throw invalid()
  if (!(claims.expires * 1000 > now)) throw new RequestError(403, 'The upload ticket has expired: start the upload again')
  return claims
}

/** POST …/refresh `{ ticket }`: new credentials for the ticket's key, as the upload request issued. */
export async function refreshCredentials(context: TokenRoutesContext, body: unknown): Promise<RefreshReply> {
  const { key } = verifyTokenTicket(context, parseAbortRequest(body).ticket)
  return { token: { Credentials: await context.issueToken(key) } }
}

/**
 * POST …/duplicates `{ ticket, keep? }`: aborts the ticket key's multipart uploads but `keep`,
 * only those started after the ticket was issued (a duplicate of a retried Create always is),
 * so an older upload to the same key from elsewhere is left alone.
 */
export async function abortDuplicates({ config, s3, ...rest }: TokenRoutesContext, body: unknown): Promise<DuplicatesReply> {
  const { ticket } = parseAbortRequest(body)
  const keep = (body as { keep?: unknown }).keep
  if (keep !== undefined && typeof keep !== 'string') throw new RequestError(400, 'keep must be the upload id in use, or absent')
  const { bucket, key, issued } = verifyTokenTicket({ config, s3, ...rest }, ticket)
  const since = (issued - CLOCK_MARGIN_SECONDS) * 1000
  const listed = await s3.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: key }))
  const duplicates = (listed.Uploads ?? []).filter(
    (upload) => upload.Key === key && upload.UploadId !== keep && (upload.Initiated?.getTime() ?? 0) >= since,
  )
  for (const { UploadId } of duplicates) {
    await s3.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId })).catch((error: unknown) => {
      // Gone meanwhile: as good as aborted.
      if ((error as { name?: string }).name !== 'NoSuchUpload') throw error
    })
  }
  return { aborted: duplicates.length }
}

const mac = (payload: string, secret: string) => createHmac('sha256', secret).update(payload).digest()

const invalid = () => new RequestError(403, 'The upload ticket is not valid')
