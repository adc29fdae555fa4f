import { DeleteObjectCommand, type S3Client } from '@aws-sdk/client-s3'
import { overLimit } from '../protocol/bytes.ts'
import { parseMediaType } from '../protocol/content-type.ts'
import { DEFAULT_CONTENT_TYPE } from '../protocol/file-limits.ts'
import type { CompleteReply, CompleteRequest } from '../protocol/wire.ts'
import type { Logger } from './config.ts'
import { errorLogFields } from './error-log-fields.ts'
import { hasFileSignature, matchesFileSignature } from './file-signatures.ts'
import { completeMultipart, type MultipartContext } from './multipart.ts'
import { RequestError } from './request-error.ts'
import { storageObjectUrl } from './storage.ts'
import { unissuedExtras } from './stored-extras.ts'
import { httpStatus, readStoredObject } from './stored-object.ts'
import { CLOCK_MARGIN_SECONDS, type Ticket, type UploadClaims } from './ticket.ts'

/** What `onUploadComplete` hears of the object, once verified. */
interface VerifiedObject {
  size: number
  contentType: string
  etag: string
}

/**
 * POST …/complete: every upload ends here once storage holds its bytes. A multipart upload the
 * upload API created (presigned, or token mode's `createMultipart`) is completed first (the server
 * sends CompleteMultipartUpload); then, for every kind, the object is checked against the ticket,
 * and only then `onUploadComplete` hears of it.
 */
export async function completeUpload(
  context: MultipartContext,
  ticket: Ticket,
  parts: CompleteRequest['parts'],
  request: Request,
  logger: Logger,
): Promise<CompleteReply> {
  let completedETag: string | undefined
  const created = ticket.kind === 'multipart' || (ticket.kind === 'token' && ticket.multipart)
  if (ticket.kind === 'multipart' && !parts)
    throw new RequestError(400, 'parts must list { partNumber, etag } for every part of a multipart upload')
  if (parts && !created)
    throw new RequestError(
      400,
      'parts are only for a multipart upload the upload API created: this upload’s storage requests were the page’s own',
    )
  // A token upload the upload API created may also have been completed by the page itself (no parts).
  if (parts) completedETag = (await completeMultipart(context, ticket, parts)).etag
  const stored = await verifyObject(context, ticket, logger)
  // RGW's reply to the read has the multipart ETag its Complete left out; the computed one is the fallback.
  const etag = stored.etag || completedETag || ''
  const serverData = await deliver(context, ticket, { ...stored, etag }, request, logger)
  const { bucket, key } = ticket
  return {
    url: storageObjectUrl({ ...context.config, bucket, key }),
    bucket,
    key,
    etag,
    ...(serverData === undefined ? {} : { serverData }),
  }
}

/**
 * The object as storage holds it, or a refusal: none there (404: the upload never happened), one
 * written before the ticket was issued (409: not this upload's, left alone), or one that breaks
 * what was declared or carries what was not issued (server/stored-extras.ts): deleted, then 413/422. In token mode, where credentials cannot bind size or
 * type, this is where both are enforced. An upload of unknown length (`sizeUnknown`) has no size
 * to equal: here it is held to `maxFileSize`, whatever storage accepted.
 */
async function verifyObject(
  { config, s3 }: MultipartContext,
  claims: UploadClaims,
  logger: Logger,
): Promise<VerifiedObject> {
  const { bucket, key, filesize, sizeUnknown, contentType } = claims
  if ((filesize === undefined && !sizeUnknown) || contentType === undefined) {
    throw new RequestError(
      400,
      'This upload declared no filesize: only uploads that declare their size and type can be completed',
    )
  }
  const essence = parseMediaType(contentType).essence
  const checkSignature = config.checkFileSignatures === true && hasFileSignature(essence)
  // One storage request: size, type, ETag, the served headers and, when checked, the first bytes.
  const stored = await readStoredObject(s3, { bucket, key, firstBytes: checkSignature, declaredSize: filesize }).catch(
    async (error: unknown) => {
      if (httpStatus(error) === 404)
        throw new RequestError(404, 'Storage holds no object for this upload: send its bytes before completing it')
      // S3 and RGW describe an object written with a customer key (SSE-C) only to a request carrying
      // that key, and answer 400 to any other. The upload API never holds the key — receiving it would
      // make the app server a holder of every page's key, which SSE-C exists to avoid — so it cannot
      // check the object: refused and deleted, as an object failing its check is, never kept
      // unrecorded. A 4xx, so the page does not retry it.
      if (httpStatus(error) === 400) {
        await refuseObject(
          s3,
          claims,
          422,
          'storage describes it only to a request carrying its customer key (SSE-C), which the upload API never holds, so it cannot be checked. ' +
            'Upload with sseCustomerKey through uploadObject and credentials of your own (docs/opt-ins.md), or with upload() without it',
          logger,
        )
      }
      // A deployment mistake, said plainly (the page retries a 5xx; the log has the storage error).
      if (httpStatus(error) === 403) {
        logger.error({ err: errorLogFields(error), key }, 'updraft: the server key may not read uploads (s3:GetObject)')
        throw new RequestError(
          500,
          'The server cannot check uploads: its key needs s3:GetObject and s3:DeleteObject on them (npx updraft-s3 doctor)',
        )
      }
      throw error
    },
  )
  if ((stored.lastModified?.getTime() ?? 0) < (claims.issued - CLOCK_MARGIN_SECONDS) * 1000) {
    throw new RequestError(
      409,
      'The object at this key was stored before this upload was issued: it is not this upload’s',
    )
  }
  const { size, contentType: storedType } = stored
  const refuse = (status: number, reason: string) => refuseObject(s3, claims, status, reason, logger)
  if (!sizeUnknown && size !== filesize) await refuse(422, `it holds ${size} bytes, not the ${filesize} declared`)
  if (config.maxFileSize !== undefined && size > config.maxFileSize)
    await refuse(413, `it holds ${size} bytes: ${overLimit(size, config.maxFileSize)}`)
  if (!sameType(storedType, contentType))
    await refuse(422, `its Content-Type is '${storedType}', not the '${contentType}' issued`)
  const extras = unissuedExtras(stored.headers, config)
  if (extras.length > 0) {
    await refuse(
      422,
      `it carries ${extras.join(', ')}, which this upload was not issued: send only the headers the upload API's reply lists ` +
        '(a token-mode page’s own tags and x-amz-meta-* go in the server’s allowedObjectExtras)',
    )
  }
  if (checkSignature && !matchesFileSignature(essence, stored.firstBytes ?? new Uint8Array())) {
    await refuse(422, `its first bytes do not match its declared type, ${essence}`)
  }
  return { size, contentType: storedType, etag: stored.etag }
}

/** Hands the verified upload to `onUploadComplete`; its return value is the page's `serverData`. */
async function deliver(
  { config, s3 }: MultipartContext,
  claims: UploadClaims,
  stored: VerifiedObject,
  request: Request,
  logger: Logger,
): Promise<unknown> {
  if (!config.onUploadComplete) return undefined
  const { bucket, key, uploadId, metadata } = claims
  try {
    return await config.onUploadComplete({ key, bucket, ...stored, metadata, uploadId, request })
  } catch (error) {
    // The app refused the upload on purpose: it goes, as a failed verification's does.
    if (error instanceof RequestError) return refuseObject(s3, claims, error.status, error.message, logger, false)
    logger.error({ err: errorLogFields(error), key, uploadId }, 'updraft: onUploadComplete failed')
    // A 5xx, so the page tries again: the object stays, verified, for a retry to record.
    throw new RequestError(
      500,
      'The file is stored, but the server could not record the upload (onUploadComplete failed): try again',
    )
  }
}

/** Deletes an object that failed its check, then refuses with why. */
async function refuseObject(
  s3: S3Client,
  { bucket, key }: UploadClaims,
  status: number,
  reason: string,
  logger: Logger,
  explain = true,
): Promise<never> {
  let fate = 'deleted'
  try {
    await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }))
  } catch (error) {
    // Refused all the same; the log says why the object is still there (docs/security.md: s3:DeleteObject).
    logger.error({ err: errorLogFields(error), key }, 'updraft: could not delete an upload that failed verification')
    fate = 'not deleted'
  }
  // A page's refusal its person sees; the operator hears it too (a fake PDF, a lying size), one line each.
  if (explain)
    logger.warn?.(
      { key, status },
      `updraft: /complete refused the upload at ${key} (${status}) and ${fate} it: ${reason}`,
    )
  throw new RequestError(status, explain ? `The uploaded object was refused and ${fate}: ${reason}` : reason)
}

/**
 * The stored Content-Type is the issued one, compared as media types (case, spacing). A token
 * upload of a typeless file sends no Content-Type, and stores call that `binary/octet-stream`.
 */
function sameType(stored: string, issued: string): boolean {
  try {
    if (parseMediaType(stored).value === issued) return true
  } catch {
    return false
  }
  return issued === DEFAULT_CONTENT_TYPE && /^binary\/octet-stream$/i.test(stored)
}
