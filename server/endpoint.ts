import type { S3Client } from '@aws-sdk/client-s3'
import { isDirectoryBucket } from '../protocol/directory-session.ts'
import { resolveConfig, stsUnavailableReason, type Logger, type ResolvedConfig, type UploadHandlerConfig } from './config.ts'
import { completeUpload } from './completion.ts'
import { credentialsOf } from './credentials.ts'
import { corsHeaders, crossSiteRefusal, preflight } from './cross-site.ts'
import { NotAnsweredError } from './bounds.ts'
import { describeError } from './errors.ts'
import { serverInfo } from './info.ts'
import { checkJsonContentType, readJson } from './json-body.ts'
import { describeServerKeyPolicy, serverKeyPolicyFor } from './key-policy.ts'
import { listParts } from './list-parts.ts'
import { abortMultipart, readTicket, signParts, type MultipartContext } from './multipart.ts'
import { parseAbortRequest, parseCompleteRequest, parsePartsRequest, parseUploadRequest } from './parse-requests.ts'
import { createPartPresigner, createPutPresigner } from './presigned-urls.ts'
import { abortDuplicates, refreshCredentials, type TokenRoutesContext } from './refresh.ts'
import { notAuthorized, RequestError } from './request-error.ts'
import { ROUTES, type Route } from './routes.ts'
import { createSessionSigner } from './session-signer.ts'
import { createS3Client } from './storage.ts'
import { createCredentialIssuer, createTokenIssuer, FEDERATION_NEEDS_USER_KEY } from './sts.ts'
import { verifyTicket } from './ticket.ts'
import { answerUploadRequest, type UploadRequestContext } from './upload-request.ts'

/**
 * The endpoint apart from how it is mounted: the Web handler (server/handler.ts) and the Fastify
 * plugin (server/fastify.ts) each find the route, then run the same two steps, so a request is
 * refused in the same order and the same words under every mounting.
 */
export interface Endpoint {
  /** The config, resolved once. */
  readonly config: ResolvedConfig
  /** The server's S3 client (multipart calls, /complete's checks; the sweep may share it). */
  readonly s3: S3Client
  /**
   * Everything decided on the method and headers alone, before the body is read: a CORS
   * preflight's answer, 405 for a wrong method, `GET /info`, then for the other routes cross-site
   * refusal, `throttle` and `authorize`, in that order. A `Response` ends the request; `undefined`
   * lets it go on to {@link Endpoint.respond}. Fastify runs it in `onRequest`, with no body.
   */
  preamble(request: Request, route: Route, logger?: Logger): Promise<Response | undefined>
  /** Reads the JSON body and answers the route; call it only for a request `preamble` let through. Never rejects. */
  respond(request: Request, route: Route, logger?: Logger): Promise<Response>
  /** A refusal made outside the two steps (an unknown route: server/routes.ts), as JSON with the CORS headers its origin gets. */
  refuse(request: Request, refusal: RequestError): Response
}

/**
 * Resolves the config (missing or invalid settings throw here, at startup) and builds what every
 * request shares: the S3 client, STS issuers, presigners and ticket secret.
 */
export function createEndpoint(config?: UploadHandlerConfig): Endpoint {
  const resolved = resolveConfig(config)
  const s3 = createS3Client(resolved)
  // One credential provider for every call the endpoint makes: its S3 client's (server/credentials.ts).
  const issueCredentials = createCredentialIssuer(resolved, credentialsOf(s3))
  const issueToken = createTokenIssuer(resolved, issueCredentials)
  const signer = createSessionSigner(resolved, issueCredentials, s3)
  const multipart: MultipartContext = {
    config: resolved,
    s3,
    presignParts: createPartPresigner(resolved, signer),
    ticketSecret: resolved.ticketSecret,
  }
  const info = serverInfo(resolved)
  const uploads: UploadRequestContext = { config: resolved, s3, info, issueToken, presignPut: createPutPresigner(resolved, signer), multipart }
  const tokenRoutes: TokenRoutesContext = { config: resolved, s3, issueToken, ticketSecret: multipart.ticketSecret }
  // A directory bucket's URLs are signed with CreateSession sessions, never the server's key.
  if (resolved.presignWith === 'server-key' && !isDirectoryBucket(resolved.bucket)) warnServerKeySigning(resolved)
  // Temporary credentials cannot call GetFederationToken; which ones the chain finds is known only
  // once asked, so say it now and refuse each token request with the same words (server/sts.ts).
  if (!resolved.staticKey && resolved.sts.mode === 'federation' && stsUnavailableReason(resolved) === undefined) {
    resolved.logger.warn?.({ store: resolved.endpoint ?? 'AWS S3' }, `${FEDERATION_NEEDS_USER_KEY}, if they are temporary`)
  }
  const { allowedOrigins } = resolved

  async function answer(request: Request, route: Exclude<Route, 'info'>, logger: Logger): Promise<unknown> {
    checkJsonContentType(request.headers.get('content-type'))
    // Read from a clone, so the key callback still gets a request whose body it can read.
    const body = await readJson(request.clone())
    switch (route) {
      case 'upload':
        return answerUploadRequest(uploads, request, parseUploadRequest(body))
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

  /** Refusals as 4xx JSON; anything else is a fault: logged, and only "Internal Server Error" for the page. */
  function failure(request: Request, route: Route, error: unknown, logger: Logger): Response {
    // Not the client's doing: the page hears what did not answer (503), the log hears it too.
    if (error instanceof NotAnsweredError) logger.error({ err: describeError(error.cause ?? error), route }, `updraft: ${error.message}`)
    if (error instanceof RequestError) return refuse(request, error)
    // The page learns only that it failed; what failed (STS/S3 code, request id) goes to the log.
    logger.error({ err: describeError(error), route }, 'updraft: upload endpoint failed')
    return new Response('Internal Server Error', { status: 500, headers: { 'content-type': 'text/plain; charset=utf-8' } })
  }

  function refuse(request: Request, error: RequestError): Response {
    const headers = corsHeaders(request, allowedOrigins)
    if (error instanceof ThrottledError) headers['retry-after'] = String(error.seconds)
    return json({ error: error.message, ...(error.code && { code: error.code }) }, error.status, headers)
  }

  return {
    config: resolved,
    s3,
    refuse,
    async preamble(request, route, logger = resolved.logger) {
      if (request.method === 'OPTIONS') return preflight(request, allowedOrigins)
      const { method } = ROUTES[route]
      if (request.method !== method) return json({ error: `Method ${request.method} is not allowed: use ${method}` }, 405, { allow: method })
      // Capabilities only, nothing issued: a GET, open to callers `authorize` would refuse.
      if (route === 'info') return json(info, 200, corsHeaders(request, allowedOrigins))
      try {
        // Another site's page never gets as far as `authorize`, which may trust the visitor's cookies.
        const crossSite = crossSiteRefusal(request, allowedOrigins)
        if (crossSite) throw crossSite
        const wait = await resolved.throttle?.(request, route)
        if (wait !== undefined && wait > 0) throw new ThrottledError(wait)
        // Authorization comes before the body is read: a refused caller learns nothing about what it sent.
        if (resolved.authorize && !(await resolved.authorize(request.clone()))) throw notAuthorized()
        return undefined
      } catch (error) {
        return failure(request, route, error, logger)
      }
    },
    async respond(request, route, logger = resolved.logger) {
      try {
        if (route === 'info') return json(info, 200, corsHeaders(request, allowedOrigins))
        return json(await answer(request, route, logger), 200, corsHeaders(request, allowedOrigins))
      } catch (error) {
        return failure(request, route, error, logger)
      }
    },
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
      `${describeServerKeyPolicy(serverKeyPolicyFor(config))} (npx updraft-s3 doctor prints this IAM policy)`,
  )
}

const json = (body: unknown, status: number, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), {
    status,
    // Replies carry credentials and signatures: no cache may keep them.
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...headers },
  })
