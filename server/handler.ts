import { isDirectoryBucket } from '../protocol/directory-session.ts'
import { MAX_PART_SIZE } from '../protocol/limits.ts'
import {
  checkJsonContentType,
  checkLimits,
  notAuthorized,
  parseAbortRequest,
  parseCompleteRequest,
  parsePartsRequest,
  parseUploadRequest,
  readJson,
  RequestError,
  type ValidUploadRequest,
} from '../protocol/validate.ts'
import { TOKEN_CACHE_CONTROL, type PresignedReply, type TokenReply, type UploadTypes } from '../protocol/wire.ts'
import { resolveConfig, stsUnavailableReason, SUB_ROUTES, type Logger, type ResolvedConfig, type Route, type UploadHandlerConfig } from './config.ts'
import { corsHeaders, crossSiteRefusal, preflight } from './cross-site.ts'
import { describeError } from './errors.ts'
import { serverInfo } from './info.ts'
import { checkKey, defaultKey } from './key.ts'
import { completeUpload } from './completion.ts'
import { listParts } from './list-parts.ts'
import { validateMetadata } from './metadata.ts'
import { abortMultipart, abortUpload, createUpload, readTicket, signParts, startMultipart, type MultipartContext } from './multipart.ts'
import { createPartPresigner, createPutPresigner } from './presigned-urls.ts'
import { createS3Client } from './storage.ts'
import { abortDuplicates, refreshCredentials, type TokenRoutesContext } from './refresh.ts'
import { createSessionSigner } from './session-signer.ts'
import { deriveTicketSecret, signUploadTicket, verifyTicket } from './ticket.ts'
import { createCredentialIssuer, createTokenIssuer } from './sts.ts'

export type { Route } from './config.ts'

/**
 * The endpoint: a Web `Request` in, a `Response` out; never rejects (a client mistake is a 4xx
 * JSON `{ error }`, anything unexpected a logged `500 Internal Server Error`). Its type
 * parameters carry the config's metadata and `serverData` types (never a value), so a page in the
 * same project can write `upload<typeof handler>(…)`.
 */
export type UploadHandler<Metadata = unknown, ServerData = unknown> = ((request: Request) => Promise<Response>) &
  UploadTypes<Metadata, ServerData>
/** The handler with the logger chosen per request (Fastify passes `request.log`). */
export type LoggingUploadHandler = (request: Request, logger?: Logger) => Promise<Response>

/** For routeOf: the last path segments that name a sub-route (config.ts). */
const SUB_ROUTE_NAMES = new Set<string>(SUB_ROUTES)

/**
 * The credential endpoint as a Web-standard handler, for Fastify (server/fastify.ts), Next.js
 * route handlers, Hono and Workers alike. With no config it reads the S3_UPLOAD_* environment;
 * missing settings throw here, not on the first upload.
 *
 * Mount it on the endpoint path and everything under it (a catch-all): it answers `POST` on the
 * path itself (the upload request), `…/parts`, `…/complete`, `…/abort` (presigned multipart),
 * `…/refresh`, `…/duplicates` (token mode) and `GET …/info`, telling them apart by the last path
 * segment. Refusals are `RequestError`s answered as 4xx JSON `{ error }` (400 bad request, 403 not
 * authorized or cross-site, 413 too large, 415 type not allowed, 429 throttled); the handler
 * itself never rejects.
 *
 * @param config - Every setting optional: what is left out comes from `S3_UPLOAD_*`; see {@link UploadHandlerConfig}.
 * @returns The handler, `(request: Request) => Promise<Response>`.
 * @throws `TypeError` when a required setting is missing (the message names every one, with its
 * environment variable) or a setting is invalid (`partSize` under 5 MiB, an unknown `sts.mode`,
 * `presignWith: 'session'` without an STS, …).
 * @example
 * ```ts
 * // app/api/s3-upload/[[...path]]/route.ts (Next.js App Router)
 * import { createUploadHandler, type UploadHandler } from 'updraft-s3/server'
 *
 * let handle: UploadHandler | undefined // created on first use: `next build` runs without S3_UPLOAD_*
 * const upload = (request: Request) =>
 *   (handle ??= createUploadHandler({
 *     maxFileSize: 100 * 1024 * 1024,
 *     allowedTypes: ['image/*', 'application/pdf'],
 *     authorize: (request) => isSignedIn(request.headers.get('cookie')),
 *   }))(request)
 *
 * export const POST = upload
 * export const GET = upload // …/info
 * ```
 */
export function createUploadHandler<Metadata = unknown, ServerData = unknown>(
  config?: UploadHandlerConfig<Metadata, ServerData>,
): UploadHandler<Metadata, ServerData> {
  const handle = createLoggingUploadHandler(config as UploadHandlerConfig)
  return (request) => handle(request)
}

export function createLoggingUploadHandler(config?: UploadHandlerConfig): LoggingUploadHandler {
  const resolved = resolveConfig(config)
  const s3 = createS3Client(resolved)
  const issueCredentials = createCredentialIssuer(resolved)
  const issueToken = createTokenIssuer(resolved, issueCredentials)
  const signer = createSessionSigner(resolved, issueCredentials, s3)
  const presignPut = createPutPresigner(resolved, signer)
  const multipart: MultipartContext = {
    config: resolved,
    s3,
    presignParts: createPartPresigner(resolved, signer),
    ticketSecret: resolved.ticketSecret ?? deriveTicketSecret(resolved.secretAccessKey),
  }
  const info = serverInfo(resolved)
  const tokenRoutes: TokenRoutesContext = { config: resolved, s3, issueToken, ticketSecret: multipart.ticketSecret }
  // A directory bucket's URLs are signed with CreateSession sessions, never the server's key.
  if (resolved.presignWith === 'server-key' && !isDirectoryBucket(resolved.bucket)) warnServerKeySigning(resolved)

  async function upload(request: Request, input: ValidUploadRequest): Promise<TokenReply | PresignedReply> {
    checkLimits(resolved, input)
    // Refused here, before anything is issued and with no call to an STS that is not there.
    if (input.strategy === 'token' && !info.token) {
      throw new RequestError(400, `Token mode is not available on this server: ${info.tokenUnavailableReason}. Upload with strategy 'presigned' instead`)
    }
    const { filename, contentType, filesize, sizeUnknown } = input
    const metadata = await validateMetadata(resolved.metadata, input.body.metadata, request)
    const key = resolved.key ? checkKey(await resolved.key(request, filename, input.body, metadata)) : defaultKey(filename, resolved.keyPrefix)
    const declared = { key, contentType, filesize, metadata, ...(sizeUnknown && { sizeUnknown: true as const }) }
    const ticketOptions = { ...resolved, ticketSecret: multipart.ticketSecret }
    // The session credential that signs presigned URLs may write only under keyPrefix.
    if (resolved.presignWith === 'session' && input.strategy === 'presigned' && !key.startsWith(resolved.keyPrefix)) {
      throw new TypeError(
        `updraft: the key callback returned '${key}', outside keyPrefix '${resolved.keyPrefix}' that presigned URLs may write: return keys under it, or set keyPrefix`,
      )
    }
    const { bucket, region, endpoint } = resolved

    if (input.strategy === 'token') {
      // Asked (createMultipart), the multipart upload is created here, next to the store, while
      // the credentials are issued: the page's own CreateMultipartUpload would cost it a round trip.
      const creating = input.createMultipart
        ? createUpload(s3, { Bucket: bucket, Key: key, ContentType: contentType, CacheControl: TOKEN_CACHE_CONTROL })
        : undefined
      const [issued, created] = await Promise.allSettled([issueToken(key), creating])
      if (issued.status === 'rejected') {
        // Nothing is handed out, so nothing created may stay behind (what an abort misses, the sweep takes).
        if (created.status === 'fulfilled' && created.value) await abortUpload(s3, bucket, key, created.value).catch(() => undefined)
        throw issued.reason
      }
      if (created.status === 'rejected') throw created.reason
      const uploadId = created.value
      // endpoint and path style only for a custom store, as next-s3-upload's client expects for AWS.
      const store = endpoint ? { endpoint, forcePathStyle: resolved.forcePathStyle } : {}
      const ticket = signUploadTicket('token', declared, ticketOptions, undefined, uploadId)
      return { token: { Credentials: issued.value }, key, bucket, region, ...store, ...(uploadId && { uploadId }), ticket }
    }
    // A single PUT is capped at 5 GiB whatever the threshold says; a body of unknown length
    // (longer than one part) always goes multipart, its parts capped by maxFileSize.
    if (sizeUnknown || (filesize !== undefined && filesize > Math.min(resolved.multipartThreshold, MAX_PART_SIZE))) {
      return startMultipart(multipart, declared)
    }
    const { url, headers } = await presignPut({ key, contentType, filesize })
    return { key, bucket, region, endpoint, url, headers, ticket: signUploadTicket('put', declared, ticketOptions) }
  }

  async function route(request: Request, name: Exclude<Route, 'info'>, logger: Logger): Promise<unknown> {
    // Another site's page never gets as far as `authorize`, which may trust the visitor's cookies.
    const crossSite = crossSiteRefusal(request, resolved.allowedOrigins)
    if (crossSite) throw crossSite
    const wait = await resolved.throttle?.(request, name)
    if (wait !== undefined && wait > 0) throw new ThrottledError(wait)
    // Authorization comes next: a refused caller learns nothing about what it sent.
    if (resolved.authorize && !(await resolved.authorize(request.clone()))) {
      throw notAuthorized()
    }
    checkJsonContentType(request.headers.get('content-type'))
    // Read from a clone, so the key callback still gets a request whose body it can read.
    const body = await readJson(request.clone())
    switch (name) {
      case 'upload':
        return upload(request, parseUploadRequest(body))
      case 'parts': {
        const { ticket, ...asked } = parsePartsRequest(body)
        return await signParts(multipart, readTicket(multipart, ticket), asked)
      }
      case 'complete': {
        const { ticket, parts } = parseCompleteRequest(body)
        return completeUpload(multipart, verifyTicket(ticket, multipart.ticketSecret, resolved.bucket), parts, request, logger)
      }
      case 'abort':
        return abortMultipart(multipart, readTicket(multipart, parseAbortRequest(body).ticket))
      case 'list-parts':
        return listParts(multipart, readTicket(multipart, parseAbortRequest(body).ticket))
      case 'refresh':
        return refreshCredentials(tokenRoutes, body)
      case 'duplicates':
        return abortDuplicates(tokenRoutes, body)
    }
  }

  return async (request, logger = resolved.logger) => {
    const name = routeOf(request.url)
    if (request.method === 'OPTIONS') return preflight(request, resolved.allowedOrigins)
    const cors = corsHeaders(request, resolved.allowedOrigins)
    // Capabilities only, nothing issued: a GET, open to callers `authorize` would refuse.
    if (name === 'info') {
      if (request.method === 'GET') return json(info, 200, cors)
      return json({ error: `Method ${request.method} is not allowed: use GET` }, 405, { allow: 'GET' })
    }
    if (request.method !== 'POST') {
      return json({ error: `Method ${request.method} is not allowed: use POST` }, 405, { allow: 'POST' })
    }
    try {
      return json(await route(request, name, logger), 200, cors)
    } catch (error) {
      if (error instanceof ThrottledError) return json({ error: error.message }, 429, { ...cors, 'retry-after': String(error.seconds) })
      if (error instanceof RequestError) return json({ error: error.message }, error.status, cors)
      // The page learns only that it failed; what failed (STS/S3 code, request id) goes to the log.
      logger.error({ err: describeError(error), route: name }, 'updraft: upload endpoint failed')
      return new Response('Internal Server Error', { status: 500, headers: { 'content-type': 'text/plain; charset=utf-8' } })
    }
  }
}

/** `throttle` said to wait: 429 with Retry-After. */
class ThrottledError extends RequestError {
  override name = 'ThrottledError'
  readonly seconds: number

  constructor(seconds: number) {
    const whole = Math.max(1, Math.ceil(seconds))
    super(429, `Too many requests: try again in ${whole} s`)
    this.seconds = whole
  }
}

/**
 * Said when the handler is created, so it shows at startup: without an STS the server's own key
 * signs every URL, and a header a page adds to one is applied with that key's rights on stores
 * that do not refuse unsigned headers (RGW, s3rver, and others; AWS refuses them).
 */
function warnServerKeySigning(config: ResolvedConfig) {
  const why = stsUnavailableReason(config) ?? 'presignWith is server-key'
  config.logger.warn?.(
    { store: config.endpoint ?? 'AWS S3', bucket: config.bucket },
    `updraft: presigned URLs are signed with the server's own key (${why}). Give that key only ` +
      `s3:PutObject and s3:AbortMultipartUpload on ${config.bucket}/${config.keyPrefix}* (README, "Security")`,
  )
}

/** Matched on the last path segment, so the handler works under any prefix. */
export function routeOf(url: string): Route {
  const last = new URL(url).pathname.replace(/\/+$/, '').split('/').pop()!
  return SUB_ROUTE_NAMES.has(last) ? (last as Route) : 'upload'
}

const json = (body: unknown, status: number, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), {
    status,
    // Replies carry credentials and signatures: no cache may keep them.
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...headers },
  })
