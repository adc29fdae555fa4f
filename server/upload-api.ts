import type { S3Client } from '@aws-sdk/client-s3'
import { isDirectoryBucket } from '../protocol/directory-session.ts'
import { answerBatch, chargeFiles, combineAllowances, type FileAllowance } from './batch.ts'
import { NotAnsweredError } from './bounds.ts'
import { completeUpload } from './completion.ts'
import {
  type Logger,
  type ResolvedConfig,
  resolveConfig,
  stsUnavailableReason,
  type UploadHandlerConfig,
} from './config.ts'
import { configurationFault, createFaultLog } from './config-faults.ts'
import { credentialsOf } from './credentials.ts'
import { corsHeaders, crossSiteRefusal, preflight } from './cross-site.ts'
import { errorLogFields } from './error-log-fields.ts'
import { createFormCheck } from './form-check.ts'
import { serverInfo } from './info.ts'
import { checkJsonContentType, readJson } from './json-body.ts'
import { describeServerKeyPolicy, serverKeyPolicyFor } from './key-policy.ts'
import { listParts } from './list-parts.ts'
import { isLocalStore } from './local-store.ts'
import { abortMultipart, type MultipartContext, readTicket, signParts } from './multipart.ts'
import {
  parseAbortRequest,
  parseBatchRequest,
  parseCompleteRequest,
  parsePartsRequest,
  parseUploadRequest,
} from './parse-requests.ts'
import { createFormPresigner } from './presigned-form.ts'
import { createPartPresigner, createPutPresigner } from './presigned-urls.ts'
import { abortDuplicates, refreshCredentials, type TokenRoutesContext } from './refresh.ts'
import { notAuthorized, RequestError, ThrottledError } from './request-error.ts'
import { ROUTES, type Route } from './routes.ts'
import { createSessionSigner } from './session-signer.ts'
import { createS3Client } from './storage.ts'
import { createStorageCheck } from './storage-check.ts'
import { createCredentialIssuer, createTokenIssuer, FEDERATION_NEEDS_USER_KEY } from './sts.ts'
import { verifyTicket } from './ticket.ts'
import { answerUploadRequest, type UploadRequestContext } from './upload-request.ts'

/**
 * The upload API apart from how it is mounted: the Web handler (server/handler.ts) and the Fastify
 * plugin (server/fastify.ts) each find the route, then run the same two steps, so a request is
 * refused in the same order and the same words under every mounting.
 */
export interface UploadApi {
  /** The config, resolved once. */
  readonly config: ResolvedConfig
  /** The server's S3 client (multipart calls, /complete's checks; the sweep may share it). */
  readonly s3: S3Client
  /**
   * Everything decided on the method and headers alone, before the body is read: a CORS
   * preflight's answer, 405 for a wrong method, `GET /info`, then for the other routes cross-site
   * refusal, `throttle` and `authorize`, in that order. A `Response` ends the request; `undefined`
   * lets it go on to {@link UploadApi.respond}. Fastify runs it in `onRequest`, with no body.
   */
  preamble(request: Request, route: Route, logger?: Logger): Promise<Response | undefined>
  /**
   * Reads the JSON body and answers the route; call it only for a request `preamble` let through.
   * `chargeFile` is the mounting's own rate limit (the Fastify plugin's `rateLimit`), charged once
   * more for each file of a batch after the first, as `throttle` is. Never rejects.
   */
  respond(request: Request, route: Route, logger?: Logger, chargeFile?: ChargeFile): Promise<Response>
  /** A refusal made outside the two steps (an unknown route: server/routes.ts), as JSON with the CORS headers its origin gets. */
  refuse(request: Request, refusal: RequestError): Response
}

/**
 * One more charge to a rate limit for the client of the request at hand: seconds to wait when it is
 * over the limit, else undefined. The preamble charged the request itself, before its body was read;
 * a batch of N files is charged up to N − 1 more once it is parsed (one by one, until the limit
 * refuses one), so it costs what N one-file requests would: the limit bounds the credentials,
 * signatures and storage requests a client causes, which are per file, and batching neither gets
 * around it nor pays more. The files the limit allows go (the first ones); the rest are answered
 * 429 with `retryAfter`, so a batch larger than what is left of the limit still makes progress.
 */
export type ChargeFile = () => Promise<number | undefined>

/**
 * Resolves the config (missing or invalid settings throw here, at startup) and builds what every
 * request shares: the S3 client, STS issuers, presigners and ticket secret.
 */
export function createUploadApi(config?: UploadHandlerConfig): UploadApi {
  const resolved = resolveConfig(config)
  const s3 = createS3Client(resolved)
  // One credential provider for every call the upload API makes: its S3 client's (server/credentials.ts).
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
  const presignForm = createFormPresigner(resolved, signer)
  const uploads: UploadRequestContext = {
    config: resolved,
    s3,
    info,
    issueToken,
    presignPut: createPutPresigner(resolved, signer),
    presignForm,
    formsEnforced: createFormCheck(resolved, presignForm, s3),
    multipart,
    checkStorage: createStorageCheck(resolved, s3),
  }
  const logFault = createFaultLog()
  // Whether storage and STS have answered an upload request: before, a refused connection is a
  // wrong setting; after, an outage a retry may outlast (server/config-faults.ts).
  let reached = false
  const tokenRoutes: TokenRoutesContext = { config: resolved, s3, issueToken, ticketSecret: multipart.ticketSecret }
  // A directory bucket's URLs are signed with CreateSession sessions, never the server's key.
  if (resolved.presignWith === 'server-key' && !isDirectoryBucket(resolved.bucket)) warnServerKeySigning(resolved)
  // Temporary credentials cannot call GetFederationToken; which ones the chain finds is known only
  // once asked, so say it now and refuse each token request with the same words (server/sts.ts).
  if (!resolved.staticKey && resolved.sts.mode === 'federation' && stsUnavailableReason(resolved) === undefined) {
    resolved.logger.warn?.(
      { store: resolved.endpoint ?? 'AWS S3' },
      `${FEDERATION_NEEDS_USER_KEY}, if they are temporary`,
    )
  }
  const { allowedOrigins } = resolved

  async function answer(
    request: Request,
    route: Exclude<Route, 'info'>,
    logger: Logger,
    chargeFile?: ChargeFile,
  ): Promise<unknown> {
    checkJsonContentType(request.headers.get('content-type'))
    // Read from a clone, so the key callback still gets a request whose body it can read.
    const body = await readJson(request.clone())
    switch (route) {
      case 'upload':
        return named(() => answerUploadRequest(uploads, request, parseUploadRequest(body)), logger)
      case 'parts': {
        const { ticket, ...asked } = parsePartsRequest(body)
        return await signParts(multipart, readTicket(multipart, ticket), asked)
      }
      case 'complete': {
        const { ticket, parts } = parseCompleteRequest(body)
        return completeUpload(
          multipart,
          verifyTicket(ticket, multipart.ticketSecret, resolved.bucket),
          parts,
          request,
          logger,
        )
      }
      case 'abort':
        return abortMultipart(multipart, readTicket(multipart, parseAbortRequest(body).ticket))
      case 'list-parts':
        return listParts(multipart, readTicket(multipart, parseAbortRequest(body).ticket))
      case 'refresh':
        return refreshCredentials(tokenRoutes, body)
      case 'duplicates':
        return abortDuplicates(tokenRoutes, body)
      case 'batch': {
        const files = parseBatchRequest(body)
        const allowance = await allowFiles(request, route, files.length, chargeFile)
        return answerBatch(files, allowance, route, logger, (file) =>
          named(() => answerUploadRequest(uploads, request, parseUploadRequest(file)), logger),
        )
      }
      case 'batch-complete': {
        const files = parseBatchRequest(body)
        const allowance = await allowFiles(request, route, files.length, chargeFile)
        return answerBatch(files, allowance, route, logger, (file) =>
          named(() => {
            const { ticket, parts } = parseCompleteRequest(file)
            return completeUpload(
              multipart,
              verifyTicket(ticket, multipart.ticketSecret, resolved.bucket),
              parts,
              request,
              logger,
            )
          }, logger),
        )
      }
    }
  }

  /**
   * `answerOne()`, with a configuration fault it shows (a wrong secret, an unknown bucket, a store
   * out of reach) turned into the final `ServerMisconfigured` refusal and logged once: each file of
   * a batch gets it in its entry, as a one-file request does.
   */
  async function named<T>(answerOne: () => Promise<T>, logger: Logger): Promise<T> {
    try {
      const answered = await answerOne()
      reached = true
      return answered
    } catch (error) {
      const fault = configurationFault(error, resolved, reached)
      if (!fault) throw error
      if (fault === error) throw fault
      logFault(fault, logger)
      throw fault
    }
  }

  /** How many of a batch's `count` files the rate limits let through (see {@link ChargeFile}). */
  async function allowFiles(
    request: Request,
    route: Route,
    count: number,
    chargeFile: ChargeFile | undefined,
  ): Promise<FileAllowance> {
    const { throttle } = resolved
    const limits = [...(throttle ? [async () => throttle(request, route)] : []), ...(chargeFile ? [chargeFile] : [])]
    const allowances = await Promise.all(
      limits.map(async (charge) => {
        const extra = await chargeFiles(charge, count - 1)
        return { allowed: 1 + extra.allowed, retryAfter: extra.retryAfter }
      }),
    )
    return combineAllowances({ allowed: count, retryAfter: 0 }, ...allowances)
  }

  /** Refusals as 4xx JSON; anything else is a fault: logged, and only "Internal Server Error" for the page. */
  function failure(request: Request, route: Route, caught: unknown, logger: Logger): Response {
    // A wrong setting met on any route: the page hears it is final, the log hears it once.
    const fault = configurationFault(caught, resolved, reached)
    if (fault && fault !== caught) logFault(fault, logger)
    const error = fault ?? caught
    // Not the client's doing: the page hears what did not answer (503), the log hears it too.
    if (error instanceof NotAnsweredError)
      logger.error({ err: errorLogFields(error.cause ?? error), route }, `updraft: ${error.message}`)
    if (error instanceof RequestError) return refuse(request, error)
    // The page learns only that it failed; what failed (STS/S3 code, request id) goes to the log.
    logger.error({ err: errorLogFields(error), route }, 'updraft: upload API failed')
    return new Response('Internal Server Error', {
      status: 500,
      headers: { 'content-type': 'text/plain; charset=utf-8' },
    })
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
      if (request.method !== method)
        return json({ error: `Method ${request.method} is not allowed: use ${method}` }, 405, { allow: method })
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
    async respond(request, route, logger = resolved.logger, chargeFile) {
      try {
        if (route === 'info') return json(info, 200, corsHeaders(request, allowedOrigins))
        return json(await answer(request, route, logger, chargeFile), 200, corsHeaders(request, allowedOrigins))
      } catch (error) {
        return failure(request, route, error, logger)
      }
    },
  }
}

/**
 * Said when the handler is created, so it shows at startup: without an STS the server's own key
 * signs every URL, and a header a page adds to one is applied with that key's rights on stores
 * that do not refuse unsigned headers (RGW, s3rver, and others; AWS refuses them).
 */
function warnServerKeySigning(config: ResolvedConfig) {
  if (isLocalStore(config)) {
    config.logger.warn?.(
      { store: config.endpoint },
      `updraft: the local store at ${config.endpoint} (s3rver): presigned uploads signed with its one key, token mode off — expected for the local store, which has no STS or IAM`,
    )
    return
  }
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
