import type { FastifyError, FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { MAX_BODY_BYTES } from '../protocol/limits.ts'
import { bodyTooLarge, notAuthorized } from '../protocol/validate.ts'
import { DEFAULT_ENDPOINT } from '../protocol/wire.ts'
import type { Logger, UploadHandlerConfig } from './config.ts'
import { createLoggingUploadHandler, describeError, type LoggingUploadHandler } from './handler.ts'

export interface S3UploadPluginOptions extends UploadHandlerConfig {
  /** @default '/api/s3-upload' */
  prefix?: string
}

export const DEFAULT_PREFIX = DEFAULT_ENDPOINT

/** The upload request and its sub-routes (server/handler.ts `routeOf`); `/info` is a GET of its own. */
const ROUTES = ['/', '/parts', '/complete', '/abort', '/refresh', '/duplicates']

/**
 * The credential endpoint as a Fastify plugin: `app.register(s3Upload, { prefix, ...config })`.
 * Each route converts the Fastify request to a Web `Request`, runs the Web-standard handler, and
 * sends its `Response` back, logging failures with the request's pino logger.
 */
const plugin: FastifyPluginAsync<S3UploadPluginOptions> = async (app, { prefix = DEFAULT_PREFIX, ...config }) => {
  // authorize runs in an onRequest hook below, before Fastify reads or parses the body.
  const handle = createLoggingUploadHandler({ ...config, authorize: undefined })
  // fastify-plugin skips encapsulation, and with it the register-time prefix: an inner scope
  // takes the prefix and keeps the JSON parser, hook and error handler below to these routes.
  await app.register((scope) => routes(scope, handle, config), { prefix })
}

async function routes(scope: FastifyInstance, handle: LoggingUploadHandler, { authorize, logger }: UploadHandlerConfig) {
  // The body goes to the Web handler as the text that was sent: protocol/validate.ts is the one
  // judge of what it holds, so every mounting answers a bad request in the same words.
  scope.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: MAX_BODY_BYTES }, (_request, body, done) =>
    done(null, body),
  )
  scope.setErrorHandler((error: FastifyError, request, reply) => replyWithError(error, reply, logger ?? request.log))
  if (authorize) {
    scope.addHook('onRequest', async (request, reply) => {
      // Wrong methods get their 405 from the handler, as without authorize.
      if (request.method !== 'POST') return
      if (!(await authorize(toWebRequest(request, undefined)))) {
        return reply.code(403).header('cache-control', 'no-store').send({ error: notAuthorized().message })
      }
    })
  }

  const forward = async (request: FastifyRequest, reply: FastifyReply) => {
    // A logger passed in the options wins; else the request's pino logger, which carries reqId.
    const response = await handle(toWebRequest(request, request.body as string | undefined), logger ?? request.log)
    reply.code(response.status)
    response.headers.forEach((value, name) => void reply.header(name, value))
    return reply.send(await response.text())
  }
  for (const path of ROUTES) {
    // Other methods reach the handler too, which answers 405 with `Allow: POST`.
    scope.route({ method: ['POST', 'GET', 'PUT', 'DELETE', 'PATCH'], url: path, exposeHeadRoute: false, handler: forward })
  }
  // What the page may offer (server/info.ts); `authorize` above guards only POSTs.
  scope.get('/info', { exposeHeadRoute: false }, forward)
}

/** Fastify's own refusals (body size, media type) in the protocol's `{ error }` shape. */
function replyWithError(error: FastifyError, reply: FastifyReply, logger: Logger) {
  // Fastify stops reading at the same limit the Web handler does; the words are the protocol's.
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return reply.code(413).send({ error: bodyTooLarge().message })
  const status = error.statusCode ?? 500
  if (status >= 400 && status < 500) return reply.code(status).send({ error: error.message })
  logger.error({ err: describeError(error) }, 'updraft: upload endpoint failed')
  return reply.code(500).type('text/plain; charset=utf-8').send('Internal Server Error')
}

const SKIPPED_HEADERS = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive'])

function toWebRequest(request: FastifyRequest, body: string | undefined): Request {
  const headers = new Headers()
  for (const [name, value] of Object.entries(request.headers)) {
    // HTTP/2 pseudo-headers and hop-by-hop headers belong to the connection, not the request.
    if (value === undefined || name.startsWith(':') || SKIPPED_HEADERS.has(name)) continue
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item)
  }
  return new Request(new URL(request.url, `${request.protocol}://${safeHost(request.host)}`), {
    method: request.method,
    headers,
    body: request.method === 'GET' || request.method === 'HEAD' ? undefined : body,
  })
}

/** A Host header that cannot be part of a URL must not turn a request into a 500. */
const safeHost = (host: string) => (/^[\w.-]+(:\d+)?$|^\[[\d:a-f.]+\](:\d+)?$/i.test(host) ? host : 'localhost')

/** `import s3Upload from 'updraft/fastify'`; named `updraft` for `dependencies` of other plugins. */
export const s3Upload = fp(plugin, { fastify: '5.x', name: 'updraft' })
export default s3Upload
