import { ListMultipartUploadsCommand, type S3Client } from '@aws-sdk/client-s3'
import type { DuplicatesReply, RefreshReply } from '../protocol/wire.ts'
import type { ResolvedConfig } from './config.ts'
import { abortUpload } from './multipart.ts'
import { parseDuplicatesRequest, parseRefreshRequest } from './parse-requests.ts'
import type { IssueToken } from './sts.ts'
import {
  CLOCK_MARGIN_SECONDS,
  type DeclaredUpload,
  signUploadTicket,
  type TokenTicketClaims,
  verifyTicketOf,
} from './ticket.ts'

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

/** A token ticket (server/ticket.ts) for `upload`; a bare key declares nothing else. */
export function signTokenTicket(
  { config, ticketSecret }: TokenRoutesContext,
  upload: string | DeclaredUpload,
  now = Date.now(),
): string {
  return signUploadTicket(
    'token',
    typeof upload === 'string' ? { key: upload } : upload,
    { ...config, ticketSecret },
    now,
  )
}

/** The claims, or a 403 when the ticket is forged, altered, expired, for another bucket or not a token ticket. */
export function verifyTokenTicket(
  { config, ticketSecret }: TokenRoutesContext,
  ticket: string,
  now = Date.now(),
): TokenTicketClaims {
  const { kind: _, ...claims } = verifyTicketOf('token', ticket, ticketSecret, config.bucket, now)
  return claims
}

/** POST …/refresh `{ ticket }`: new credentials for the ticket's key, as the upload request issued. */
export async function refreshCredentials(context: TokenRoutesContext, body: unknown): Promise<RefreshReply> {
  const { key } = verifyTokenTicket(context, parseRefreshRequest(body).ticket)
  return { token: { Credentials: await context.issueToken(key) } }
}

/**
 * POST …/duplicates `{ ticket, keep? }`: aborts the ticket key's multipart uploads but `keep`,
 * only those started after the ticket was issued (a duplicate of a retried Create always is),
 * so an older upload to the same key from elsewhere is left alone.
 */
export async function abortDuplicates(
  { config, s3, ...rest }: TokenRoutesContext,
  body: unknown,
): Promise<DuplicatesReply> {
  const { ticket, keep } = parseDuplicatesRequest(body)
  const { bucket, key, issued } = verifyTokenTicket({ config, s3, ...rest }, ticket)
  const since = (issued - CLOCK_MARGIN_SECONDS) * 1000
  const listed = await s3.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: key }))
  const duplicates = (listed.Uploads ?? []).filter(
    (upload) => upload.Key === key && upload.UploadId !== keep && (upload.Initiated?.getTime() ?? 0) >= since,
  )
  for (const { UploadId } of duplicates) await abortUpload(s3, bucket, key, UploadId!)
  return { aborted: duplicates.length }
}
