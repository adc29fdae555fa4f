import { createHash } from 'node:crypto'
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  type CreateMultipartUploadCommandInput,
  HeadObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3'
import { FIRST_PART_URLS, MAX_OBJECT_SIZE, MAX_PART_SIZE } from '../protocol/limits.ts'
import { maxPartNumber, partRange, planParts } from '../protocol/parts.ts'
import {
  type AbortReply,
  type CompleteReply,
  type CompleteRequest,
  type PartsReply,
  type PartsRequest,
  PRESIGNED_CACHE_CONTROL,
  type PresignedMultipartReply,
} from '../protocol/wire.ts'
import type { Logger, ResolvedConfig } from './config.ts'
import { abortLostCreates } from './lost-creates.ts'
import type { createPartPresigner } from './presigned-urls.ts'
import { RequestError } from './request-error.ts'
import {
  checkCompleteParts,
  checkPartNumbers,
  checkPartSizes,
  checkUnknownSizeCompleteParts,
  checkUnknownSizePartNumbers,
} from './request-limits.ts'
import { storageObjectUrl } from './storage.ts'
import {
  CLOCK_MARGIN_SECONDS,
  signTicket,
  type TicketClaims,
  type TokenTicketClaims,
  ticketLifetime,
  verifyTicketOf,
} from './ticket.ts'

/** What the multipart routes share; built once per handler. */
export interface MultipartContext {
  config: ResolvedConfig
  s3: S3Client
  presignParts: ReturnType<typeof createPartPresigner>
  ticketSecret: string
}

/**
 * CreateMultipartUpload, then a ticket that carries the plan to /parts, /complete and /abort.
 * Without a `filesize` (the page said `sizeUnknown`) there is no plan: parts of the configured
 * `partSize`, raised so that `maxFileSize` fits in 10 000 parts, and `partCount` is left out.
 */
export async function startMultipart(
  { config, s3, ticketSecret, presignParts }: MultipartContext,
  {
    key,
    contentType,
    filesize,
    metadata,
  }: { key: string; contentType: string; filesize: number | undefined; metadata?: unknown },
): Promise<PresignedMultipartReply> {
  const plan = filesize === undefined ? unknownSizePlan(config) : knownSizePlan(filesize, config.partSize)
  // The server's own request: the page adds nothing to it. The same headers a single PUT signs.
  const uploadId = await createUpload(
    s3,
    {
      Bucket: config.bucket,
      Key: key,
      ContentType: contentType,
      CacheControl: PRESIGNED_CACHE_CONTROL,
      ACL: config.objectAcl,
      ContentDisposition: config.contentDisposition,
    },
    config.logger,
  )
  const claims: TicketClaims = {
    bucket: config.bucket,
    key,
    uploadId,
    ...plan,
    contentType,
    metadata,
    ...ticketLifetime(config.ticketTtlSeconds),
  }
  // Of unknown length, the first URLs are for whole parts: the engine uses them only for parts of exactly partSize.
  const firstParts = Math.min(claims.partCount ?? maxPartNumber(claims.partSize, config.maxFileSize), FIRST_PART_URLS)
  const partNumbers = Array.from({ length: firstParts }, (_, i) => i + 1)
  return {
    key,
    bucket: config.bucket,
    region: config.region,
    endpoint: config.endpoint,
    uploadId,
    partSize: claims.partSize,
    ...(claims.partCount !== undefined && { partCount: claims.partCount }),
    ticket: signTicket({ kind: 'multipart', ...claims }, ticketSecret),
    urls: await presignParts(claims, partLengths(claims, partNumbers)),
  }
}

/**
 * CreateMultipartUpload with the server's key: the new upload's id. When the SDK had to retry it
 * (a reply lost on the way), the uploads earlier attempts may have made on the key are aborted
 * before the id is handed out (server/lost-creates.ts).
 */
export async function createUpload(
  s3: S3Client,
  input: CreateMultipartUploadCommandInput,
  logger: Logger,
): Promise<string> {
  const started = Date.now()
  const created = await s3.send(new CreateMultipartUploadCommand(input))
  if (!created.UploadId) throw new Error('updraft: CreateMultipartUpload answered without an UploadId')
  if ((created.$metadata.attempts ?? 1) > 1) {
    const { Bucket: bucket, Key: key } = input as { Bucket: string; Key: string }
    const where = { bucket, key, keep: created.UploadId, callMs: Date.now() - started }
    await abortLostCreates(s3, where, (uploadId) => abortUpload(s3, bucket, key, uploadId), logger)
  }
  return created.UploadId
}

/** A multipart ticket's claims, or a 403 for any other ticket (server/ticket.ts). */
export function readTicket({ config, ticketSecret }: MultipartContext, ticket: string): TicketClaims {
  const { kind: _, ...claims } = verifyTicketOf('multipart', ticket, ticketSecret, config.bucket)
  return claims
}

/** POST …/parts: URLs for the parts asked, each bound to its length (the ticket's plan, or the page's `sizes`). */
export async function signParts(
  context: MultipartContext,
  claims: TicketClaims,
  { partNumbers, contentMd5, sizes }: Omit<PartsRequest, 'ticket'>,
): Promise<PartsReply> {
  if (claims.sizeUnknown) {
    checkUnknownSizePartNumbers(partNumbers, { partSize: claims.partSize, maxFileSize: context.config.maxFileSize })
    checkPartSizes(sizes, claims.partSize)
  } else {
    if (sizes !== undefined)
      throw new RequestError(
        400,
        'sizes is only for uploads of unknown length: this upload declared its filesize, which fixes every part’s length',
      )
    checkPartNumbers(partNumbers, claims.partCount)
  }
  return { urls: await context.presignParts(claims, partLengths(claims, partNumbers, sizes), contentMd5) }
}

/**
 * Each part's exact length, which its URL binds: from the declared size's plan, or for an upload
 * of unknown length as the page gave it (already checked: 1..partSize), else a whole part.
 */
function partLengths(
  claims: TicketClaims,
  partNumbers: readonly number[],
  sizes?: Record<string, number>,
): Map<number, number> {
  const plan = claims.sizeUnknown ? undefined : planParts(claims.filesize, claims.partSize)
  return new Map(
    partNumbers.map((n) => {
      if (!plan) return [n, sizes?.[n] ?? claims.partSize]
      const [start, end] = partRange(plan, n)
      return [n, end - start]
    }),
  )
}

/**
 * CompleteMultipartUpload of an upload the upload API created: a presigned one, checked against the
 * ticket's plan; a token one (`createMultipart`), whose parts the page sized itself, checked only
 * for numbers 1..10 000, each once (storage checks the rest, and /complete the stored size).
 */
export async function completeMultipart(
  { config, s3 }: MultipartContext,
  claims: TicketClaims | TokenTicketClaims,
  parts: NonNullable<CompleteRequest['parts']>,
): Promise<CompleteReply> {
  if (!('partSize' in claims)) checkUnknownSizeCompleteParts(parts, { partSize: MAX_PART_SIZE, maxFileSize: undefined })
  else if (claims.sizeUnknown)
    checkUnknownSizeCompleteParts(parts, { partSize: claims.partSize, maxFileSize: config.maxFileSize })
  else checkCompleteParts(parts, claims.partCount)
  const { bucket, key, uploadId } = claims
  const ordered = [...parts].sort((a, b) => a.partNumber - b.partNumber)
  const completed = await refuseClientMistakes(() =>
    s3.send(
      new CompleteMultipartUploadCommand({
        Bucket: bucket,
        Key: key,
        UploadId: uploadId,
        MultipartUpload: { Parts: ordered.map(({ partNumber, etag }) => ({ PartNumber: partNumber, ETag: etag })) },
      }),
    ),
  ).catch((error: unknown) => completedEarlier({ s3 }, claims, error))
  // RGW answers Complete with an empty <ETag>. Storage has just accepted these part ETags, and a
  // multipart object's ETag is made from them: computed here, the server's key needs no s3:GetObject.
  const etag = completed.ETag || multipartETag(ordered.map((part) => part.etag))
  return { url: storageObjectUrl({ ...config, bucket, key }), bucket, key, etag }
}

/**
 * A /complete retried after its reply was lost finds the upload gone: the first try completed it.
 * Stores say so differently (NoSuchUpload; s3rver a 500; RGW completes it again), so after
 * NoSuchUpload or a fault the object itself is asked: written since the ticket was issued, with
 * the declared size (any size when it was unknown: /complete's check of the object follows), it is
 * the truth the page gets. Anything else keeps the original error, as does a key without
 * s3:GetObject (HeadObject is then refused: the page hears the error).
 */
async function completedEarlier(
  { s3 }: Pick<MultipartContext, 's3'>,
  claims: TicketClaims | TokenTicketClaims,
  error: unknown,
) {
  if (error instanceof RequestError && error.status !== 404) throw error
  const issued = claims.issued * 1000
  const head = await s3.send(new HeadObjectCommand({ Bucket: claims.bucket, Key: claims.key })).catch(() => undefined)
  const sizeMatches = claims.sizeUnknown || head?.ContentLength === claims.filesize
  if (!head || !sizeMatches || !((head.LastModified?.getTime() ?? 0) >= issued - CLOCK_MARGIN_SECONDS * 1000))
    throw error
  return { ETag: head.ETag }
}

export async function abortMultipart({ s3 }: MultipartContext, claims: TicketClaims): Promise<AbortReply> {
  await abortUpload(s3, claims.bucket, claims.key, claims.uploadId)
  return { aborted: true }
}

/**
 * AbortMultipartUpload, for /abort, /duplicates and the sweep alike: an upload already aborted or
 * completed (NoSuchUpload) is gone, which is what every caller wants.
 */
export async function abortUpload(s3: S3Client, bucket: string, key: string, uploadId: string): Promise<void> {
  try {
    await s3.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: uploadId }))
  } catch (error) {
    if (s3Code(error) !== 'NoSuchUpload') throw error
  }
}

/**
 * Storage refusals that follow from what the client sent (a wrong ETag, a part under 5 MiB, an
 * upload already finished) become 4xx with the code; anything else stays a fault (500, logged).
 */
const CLIENT_MISTAKES: Record<string, number> = {
  InvalidPart: 400,
  InvalidPartOrder: 400,
  EntityTooSmall: 400,
  NoSuchUpload: 404,
}

async function refuseClientMistakes<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call()
  } catch (error) {
    const code = s3Code(error)
    const status = code ? CLIENT_MISTAKES[code] : undefined
    if (status) throw new RequestError(status, `Storage refused to complete the upload: ${code}`)
    throw error
  }
}

/**
 * S3's ETag of a multipart object: the MD5 of the parts' binary MD5s, then `-{part count}`
 * (RGW computes it the same way).
 * Empty when a part ETag is not an MD5 (e.g. SSE-KMS on AWS), rather than a made-up value.
 */
function multipartETag(partETags: readonly string[]): string {
  const digests = partETags.map((etag) => etag.replace(/^(W\/)?"|"$/g, ''))
  if (!digests.every((digest) => /^[0-9a-f]{32}$/i.test(digest))) return ''
  const md5 = createHash('md5')
  for (const digest of digests) md5.update(Buffer.from(digest, 'hex'))
  return `"${md5.digest('hex')}-${digests.length}"`
}

/** The SDK names its service exceptions after the S3 error code. */
const s3Code = (error: unknown) =>
  error instanceof Error ? ((error as { Code?: string }).Code ?? error.name) : undefined

/** The ticket's plan for a declared size: planParts's part size and count. */
function knownSizePlan(filesize: number, partSize: number) {
  const plan = planParts(filesize, partSize)
  return { filesize, partSize: plan.partSize, partCount: plan.count }
}

/**
 * The ticket's plan for an upload of unknown length: the configured part size, raised as for a
 * file of `maxFileSize` bytes so that one fits in 10 000 parts (without `maxFileSize`, objects stop
 * at 10 000 parts of `partSize`).
 */
function unknownSizePlan({ maxFileSize, partSize }: ResolvedConfig) {
  return {
    sizeUnknown: true as const,
    partSize: planParts(Math.min(maxFileSize ?? 0, MAX_OBJECT_SIZE), partSize).partSize,
  }
}
