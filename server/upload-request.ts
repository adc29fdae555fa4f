import type { S3Client } from '@aws-sdk/client-s3'
import { MAX_PART_SIZE } from '../protocol/limits.ts'
import { type InfoReply, type PresignedReply, TOKEN_CACHE_CONTROL, type TokenReply } from '../protocol/wire.ts'
import type { ResolvedConfig } from './config.ts'
import { checkKey, defaultKey } from './key.ts'
import { validateMetadata } from './metadata.ts'
import { abortUpload, createUpload, type MultipartContext, startMultipart } from './multipart.ts'
import type { ValidUploadRequest } from './parse-requests.ts'
import type { createFormPresigner } from './presigned-form.ts'
import type { createPutPresigner } from './presigned-urls.ts'
import { RequestError } from './request-error.ts'
import { checkLimits } from './request-limits.ts'
import { checkTokenKey, type IssueToken } from './sts.ts'
import { signUploadTicket } from './ticket.ts'

/** What answering an upload request needs, built once per upload API (server/upload-api.ts). */
export interface UploadRequestContext {
  config: ResolvedConfig
  s3: S3Client
  info: InfoReply
  issueToken: IssueToken
  presignPut: ReturnType<typeof createPutPresigner>
  presignForm: ReturnType<typeof createFormPresigner>
  /** Storage enforces POST policies (server/form-check.ts): asked before the first form, when `formUploads` is on. */
  formsEnforced: () => Promise<boolean>
  multipart: MultipartContext
  /** Storage takes the server's key and knows the bucket (server/storage-check.ts): asked before a single PUT is signed. */
  checkStorage: () => Promise<void>
}

/**
 * `POST {path}`: checks the request against the limits, names the key, and hands out what the
 * strategy needs (token credentials, one presigned PUT, or a presigned multipart upload), with a
 * ticket binding what was declared.
 */
export async function answerUploadRequest(
  context: UploadRequestContext,
  request: Request,
  input: ValidUploadRequest,
): Promise<TokenReply | PresignedReply> {
  const { config, s3, info, issueToken, presignPut, multipart, checkStorage } = context
  checkLimits(config, input)
  // Refused here, before anything is issued and with no call to an STS that is not there.
  if (input.strategy === 'token' && !info.token) {
    throw new RequestError(
      400,
      `Token mode is not available on this server: ${info.tokenUnavailableReason}. Upload with strategy 'presigned' instead`,
      'TokenModeUnavailable',
    )
  }
  const { filename, contentType, filesize, sizeUnknown } = input
  const metadata = await validateMetadata(config.metadata, input.body.metadata, request)
  const key = config.key
    ? checkKey(await config.key(request, filename, input.body, metadata))
    : defaultKey(filename, config.keyPrefix)
  const declared = { key, contentType, filesize, metadata, ...(sizeUnknown && { sizeUnknown: true as const }) }
  const ticketOptions = { ...config, ticketSecret: multipart.ticketSecret }
  // The session credential that signs presigned URLs may write only under keyPrefix.
  if (config.presignWith === 'session' && input.strategy === 'presigned' && !key.startsWith(config.keyPrefix)) {
    throw new TypeError(
      `updraft: the key callback returned '${key}', outside keyPrefix '${config.keyPrefix}' that presigned URLs may write: return keys under it, or set keyPrefix`,
    )
  }
  const { bucket, region, endpoint } = config

  if (input.strategy === 'token') {
    // Before anything is created: a key the store's policies cannot name exactly is refused here.
    checkTokenKey(key, config.sts.policyVariables)
    // Asked (createMultipart), the multipart upload is created here, next to the store, while
    // the credentials are issued: the page's own CreateMultipartUpload would cost it a round trip.
    const creating = input.createMultipart
      ? createUpload(
          s3,
          { Bucket: bucket, Key: key, ContentType: contentType, CacheControl: TOKEN_CACHE_CONTROL },
          config.logger,
        )
      : undefined
    const [issued, created] = await Promise.allSettled([issueToken(key), creating])
    if (issued.status === 'rejected') {
      // Nothing is handed out, so nothing created may stay behind (what an abort misses, the sweep takes).
      if (created.status === 'fulfilled' && created.value)
        await abortUpload(s3, bucket, key, created.value).catch(() => undefined)
      throw issued.reason
    }
    if (created.status === 'rejected') throw created.reason
    const uploadId = created.value
    // endpoint and path style only for a custom store, as next-s3-upload's client expects for AWS.
    const store = endpoint ? { endpoint, forcePathStyle: config.forcePathStyle } : {}
    const ticket = signUploadTicket('token', declared, ticketOptions, undefined, uploadId)
    return {
      token: { Credentials: issued.value },
      key,
      bucket,
      region,
      ...store,
      ...(uploadId && { uploadId }),
      ticket,
    }
  }
  // A single PUT is capped at 5 GiB whatever the threshold says; a body of unknown length
  // (longer than one part) always goes multipart, its parts capped by maxFileSize.
  if (sizeUnknown || (filesize !== undefined && filesize > Math.min(config.multipartThreshold, MAX_PART_SIZE))) {
    return startMultipart(multipart, declared)
  }
  // The one reply made without a word to storage or STS: a wrong secret or bucket would show only as
  // the page's own PUT refused, where a larger file hears ServerMisconfigured from CreateMultipartUpload.
  await checkStorage()
  const ticket = signUploadTicket('put', declared, ticketOptions)
  const form = await formFor(context, input, key)
  if (form) return { key, bucket, region, endpoint, form, ticket }
  const { url, headers } = await presignPut({ key, contentType, filesize })
  return { key, bucket, region, endpoint, url, headers, ticket }
}

/**
 * A POST form for a file of one request, when the page can send one (`form: true`), its size is
 * declared (the policy binds it), `formUploads` is on and storage enforces policies; else undefined,
 * and the page gets a PUT URL. The ticket and `/complete` are a PUT's: the same object, verified alike.
 */
async function formFor(
  { config, presignForm, formsEnforced }: UploadRequestContext,
  input: ValidUploadRequest,
  key: string,
) {
  const { filesize, contentType } = input
  if (input.body.form !== true || !config.formUploads || filesize === undefined) return undefined
  if (!(await formsEnforced())) return undefined
  return presignForm({ key, contentType, filesize })
}
