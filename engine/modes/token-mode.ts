import {
  type DuplicatesReply,
  type RefreshReply,
  type StsCredentials,
  TOKEN_CACHE_CONTROL,
  type TokenReply,
  type UploadResult,
} from '../../protocol/wire.ts'
import type { Bytes } from '../core/body.ts'
import type { UploadRun } from '../core/run.ts'
import type { PartStream } from '../core/stream-body.ts'
import { serverNow } from '../s3/clock.ts'
import { loadMultipart, putObject } from '../s3/object.ts'
import { type Credentials, loadSigner } from '../s3/sign.ts'
import type { ObjectTarget } from '../s3/target.ts'
import { postToApi } from '../transport/api.ts'
import { completeAtApi } from './confirm.ts'
import type { RequestFields, UploadOptions } from './request.ts'

/**
 * Token mode's field of the upload request: the upload API creates a multipart upload next to its
 * store, two round trips closer than the page is, unless CreateMultipartUpload must carry headers
 * only the page has.
 */
export const tokenFields: RequestFields = (size, options) => {
  // Refused before the API is asked: its /complete checks every upload, and storage describes an
  // object written with a customer key only to a request carrying that key, which the API never holds.
  if (options.partHeaders?.['x-amz-server-side-encryption-customer-key']) {
    throw new TypeError(
      'updraft: sseCustomerKey needs uploadObject(): the upload API cannot check an object encrypted with your key',
    )
  }
  // The code the reply will need loads beside the request, so it costs no round trip of its own;
  // a failed load shows when that code is first used.
  loadSigner().catch(() => {})
  const multipart = !(size! <= options.partSize)
  if (multipart) loadMultipart().catch(() => {})
  return multipart && size !== undefined && !(options.checksum || options.objectHeaders || options.partHeaders)
    ? { createMultipart: true }
    : {}
}

/** Credentials are refreshed this long before they expire (in the servers' clock). */
export const REFRESH_BEFORE_EXPIRY_MS = 5 * 60_000

/** Token mode: the API handed out STS credentials scoped to one key; sign every request here. */
export function sendWithToken(
  file: Bytes | PartStream,
  reply: TokenReply,
  contentType: string,
  run: UploadRun<UploadOptions>,
): Promise<UploadResult> {
  const { ticket } = reply
  const { options } = run
  // The object's target: the upload's options (how requests go, and the opt-ins' objectHeaders,
  // partHeaders, resolveEndpoint, checksum), where the reply says the object lives (`endpoint`
  // there is the store's URL: the upload's own API is `api`, another name), and its credentials.
  const target: ObjectTarget = {
    ...options,
    bucket: reply.bucket,
    key: reply.key,
    region: reply.region,
    endpoint: reply.endpoint,
    forcePathStyle: reply.forcePathStyle,
    // A next-s3-upload API sends no ticket: its credentials cannot be renewed.
    credentials: ticket
      ? renewableCredentials(reply.token.Credentials, ticket, run)
      : fromWire(reply.token.Credentials),
    contentType,
    cacheControl: TOKEN_CACHE_CONTROL,
    abortOtherUploads: ticket
      ? (keep) =>
          postToApi<DuplicatesReply>(run, '/duplicates', { ticket, keep }, AbortSignal.timeout(options.cleanupTimeout))
      : undefined,
  }
  return putObject(
    file,
    target,
    run,
    // The API created the multipart upload (`createMultipart`): it completes it too, at /complete.
    reply.uploadId && ticket
      ? { uploadId: reply.uploadId, complete: (etags) => completeAtApi(ticket, run, etags) }
      : undefined,
  )
}

/**
 * Fresh credentials from the upload API's `/refresh` for this upload's ticket: shortly before
 * they expire, and when storage refuses them. One refresh at a time, shared by every request.
 * Not cancelled by an abort: cleanup needs valid credentials too.
 */
function renewableCredentials(initial: StsCredentials, ticket: string, run: UploadRun) {
  let current = initial
  let refreshAt = refreshTime(current)
  let refreshing: Promise<void> | undefined
  return async (refused: boolean): Promise<Credentials> => {
    if (refused || serverNow() >= refreshAt) {
      await (refreshing ??= postToApi<RefreshReply>(run, '/refresh', { ticket }, undefined)
        .then(({ token }) => {
          current = token.Credentials
          // Fresh credentials that already look due mean the page's clock runs ahead, and storage
          // has not said so yet: refusals still renew them, but no more refreshes on the clock.
          refreshAt = refreshTime(current) > serverNow() ? refreshTime(current) : Infinity
        })
        .finally(() => (refreshing = undefined)))
    }
    return fromWire(current)
  }
}

/** When to refresh: a few minutes before expiry; never for credentials that already look expired. */
function refreshTime({ Expiration }: StsCredentials): number {
  const expires = Date.parse(Expiration!)
  return expires > serverNow() ? expires - REFRESH_BEFORE_EXPIRY_MS : Infinity
}

const fromWire = ({ AccessKeyId, SecretAccessKey, SessionToken }: StsCredentials): Credentials => ({
  accessKeyId: AccessKeyId,
  secretAccessKey: SecretAccessKey,
  sessionToken: SessionToken,
})
