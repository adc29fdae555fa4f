import { MAX_PART_SIZE } from '../protocol/limits.ts'
import {
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
import type { PresignedReply, TokenReply } from '../protocol/wire.ts'
import { resolveConfig, type Logger, type ResolvedConfig, type UploadHandlerConfig } from './config.ts'
import { serverInfo } from './info.ts'
import { checkKey, defaultKey } from './key.ts'
import { abortMultipart, completeMultipart, readTicket, signParts, startMultipart, type MultipartContext } from './multipart.ts'
import { createPartPresigner, createPutPresigner, createS3Client } from './presigned-urls.ts'
import { abortDuplicates, refreshCredentials, signTokenTicket, type TokenRoutesContext } from './refresh.ts'
import { deriveTicketSecret } from './ticket.ts'
import { createTokenIssuer } from './sts.ts'

export type UploadHandler = (request: Request) => Promise<Response>
/** The handler with the logger chosen per request (Fastify passes `request.log`). */
export type LoggingUploadHandler = (request: Request, logger?: Logger) => Promise<Response>

/**
 * `.../parts`, `.../complete`, `.../abort`, `.../info`, and token mode's `.../refresh` and
 * `.../duplicates`; any other path is the upload request itself.
 */
export type Route = 'upload' | 'parts' | 'complete' | 'abort' | 'info' | 'refresh' | 'duplicates'
const SUB_ROUTES = new Set<string>(['parts', 'complete', 'abort', 'info', 'refresh', 'duplicates'])

/**
 * The credential endpoint as a Web-standard handler, for Fastify (server/fastify.ts), Next.js
 * route handlers, Hono and Workers alike. With no config it reads the S3_UPLOAD_* environment;
 * missing settings throw here, not on the first upload.
 */
export function createUploadHandler(config?: UploadHandlerConfig): UploadHandler {
  const handle = createLoggingUploadHandler(config)
  return (request) => handle(request)
}

export function createLoggingUploadHandler(config?: UploadHandlerConfig): LoggingUploadHandler {
  const resolved = resolveConfig(config)
  const s3 = createS3Client(resolved)
  const issueToken = createTokenIssuer(resolved)
  const presignPut = createPutPresigner(resolved)
  const multipart: MultipartContext = {
    config: resolved,
    s3,
    presignParts: createPartPresigner(resolved),
    ticketSecret: resolved.ticketSecret ?? deriveTicketSecret(resolved.secretAccessKey),
  }
  const info = serverInfo(resolved)
  const tokenRoutes: TokenRoutesContext = { config: resolved, s3, issueToken, ticketSecret: multipart.ticketSecret }

  async function upload(request: Request, input: ValidUploadRequest): Promise<TokenReply | PresignedReply> {
    checkLimits(resolved, input)
    const { filename, filetype, filesize } = input
    const key = resolved.key ? checkKey(await resolved.key(request, filename, input.body)) : defaultKey(filename)
    const { bucket, region, endpoint } = resolved

    if (input.strategy === 'token') {
      const Credentials = await issueToken(key)
      // endpoint and path style only for a custom store, as next-s3-upload's client expects for AWS.
      const store = endpoint ? { endpoint, forcePathStyle: resolved.forcePathStyle } : {}
      return { token: { Credentials }, key, bucket, region, ...store, ticket: signTokenTicket(tokenRoutes, key) }
    }
    // A single PUT is capped at 5 GiB whatever the threshold says.
    if (filesize !== undefined && filesize > Math.min(resolved.multipartThreshold, MAX_PART_SIZE)) {
      return startMultipart(multipart, { key, filetype, filesize })
    }
    const { url, headers } = presignPut({ key, filetype, filesize })
    return { key, bucket, region, endpoint, url, headers }
  }

  async function route(request: Request, name: Exclude<Route, 'info'>): Promise<unknown> {
    // Authorization comes first: a refused caller learns nothing about what it sent.
    if (resolved.authorize && !(await resolved.authorize(request.clone()))) {
      throw notAuthorized()
    }
    // Read from a clone, so the key callback still gets a request whose body it can read.
    const body = await readJson(request.clone())
    switch (name) {
      case 'upload':
        return upload(request, parseUploadRequest(body))
      case 'parts': {
        const { ticket, partNumbers } = parsePartsRequest(body)
        return signParts(multipart, readTicket(multipart, ticket), partNumbers)
      }
      case 'complete': {
        const { ticket, parts } = parseCompleteRequest(body)
        return completeMultipart(multipart, readTicket(multipart, ticket), parts)
      }
      case 'abort':
        return abortMultipart(multipart, readTicket(multipart, parseAbortRequest(body).ticket))
      case 'refresh':
        return refreshCredentials(tokenRoutes, body)
      case 'duplicates':
        return abortDuplicates(tokenRoutes, body)
    }
  }

  return async (request, logger = resolved.logger) => {
    const name = routeOf(request.url)
    // Capabilities only, nothing issued: a GET, open to callers `authorize` would refuse.
    if (name === 'info') {
      if (request.method === 'GET') return json(info, 200)
      return json({ error: `Method ${request.method} is not allowed: use GET` }, 405, { allow: 'GET' })
    }
    if (request.method !== 'POST') {
      return json({ error: `Method ${request.method} is not allowed: use POST` }, 405, { allow: 'POST' })
    }
    try {
      return json(await route(request, name), 200)
    } catch (error) {
      if (error instanceof RequestError) return json({ error: error.message }, error.status)
      // The page learns only that it failed; what failed (STS/S3 code, request id) goes to the log.
      logger.error({ err: describeError(error), route: name }, 'updraft: upload endpoint failed')
      return new Response('Internal Server Error', { status: 500, headers: { 'content-type': 'text/plain; charset=utf-8' } })
    }
  }
}

/** Matched on the last path segment, so the handler works under any prefix. */
export function routeOf(url: string): Route {
  const last = new URL(url).pathname.replace(/\/+$/, '').split('/').pop()!
  return SUB_ROUTES.has(last) ? (last as Route) : 'upload'
}

const json = (body: unknown, status: number, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), {
    status,
    // Replies carry credentials and signatures: no cache may keep them.
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...headers },
  })

/** Enough to act on (the STS/S3 code, status, request id), and nothing from the config. */
export function describeError(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) return { message: String(error) }
  const details = error as Error & { Code?: string; code?: string; $metadata?: { httpStatusCode?: number; requestId?: string } }
  return {
    type: error.name,
    message: error.message,
    code: details.Code ?? details.code ?? error.name,
    status: details.$metadata?.httpStatusCode,
    requestId: details.$metadata?.requestId,
    stack: error.stack,
  }
}
