import type { FastifyError, FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest, FastifySchema } from 'fastify'
import fp from 'fastify-plugin'
import { MAX_PARTS } from '../engine/parts.ts'
import type { Logger, UploadHandlerConfig } from './config.ts'
import { createLoggingUploadHandler, describeError, type LoggingUploadHandler } from './handler.ts'
import { MAX_BODY_BYTES, MAX_FILENAME_BYTES, MAX_PARTS_PER_REQUEST, notAuthorized } from './validate.ts'

export interface S3UploadPluginOptions extends UploadHandlerConfig {
  /** @default '/api/s3-upload' */
  prefix?: string
}

export const DEFAULT_PREFIX = '/api/s3-upload'

const ticket = { type: 'string', minLength: 1 }

/** One schema per route, mirroring server/validate.ts (which stays the judge: see `rawBodies`). */
export const routeSchemas: Record<string, FastifySchema> = {
  '/': {
    body: {
      type: 'object',
      required: ['filename', 'filetype'],
      properties: {
        filename: { type: 'string', minLength: 1, maxLength: MAX_FILENAME_BYTES },
        filetype: { type: 'string', maxLength: 255 },
        filesize: { type: 'integer', minimum: 0 },
        strategy: { type: 'string', enum: ['presigned', 'token'] },
        _nextS3: {
          type: 'object',
          required: ['strategy'],
          properties: { strategy: { type: 'string', enum: ['presigned', 'aws-sdk'] } },
        },
      },
    },
  },
  '/parts': {
    body: {
      type: 'object',
      required: ['ticket', 'partNumbers'],
      properties: {
        ticket,
        partNumbers: { type: 'array', minItems: 1, maxItems: MAX_PARTS_PER_REQUEST, items: { type: 'integer' } },
      },
    },
  },
  '/complete': {
    body: {
      type: 'object',
      required: ['ticket', 'parts'],
      properties: {
        ticket,
        parts: {
          type: 'array',
          minItems: 1,
          maxItems: MAX_PARTS,
          items: {
            type: 'object',
            required: ['partNumber', 'etag'],
            properties: { partNumber: { type: 'integer' }, etag: { type: 'string', minLength: 1 } },
          },
        },
      },
    },
  },
  '/abort': { body: { type: 'object', required: ['ticket'], properties: { ticket } } },
}

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
  // Fastify's Ajv coerces types (`"filename": 123` passes as "123"); the Web handler re-validates
  // the body exactly as sent, so a wrong type is a 400 here as everywhere.
  const rawBodies = new WeakMap<FastifyRequest, string>()
  scope.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: MAX_BODY_BYTES }, (request, body, done) => {
    rawBodies.set(request, body as string)
    try {
      done(null, JSON.parse(body as string))
    } catch (error) {
      done(Object.assign(new Error(`Request body is not valid JSON: ${(error as Error).message}`), { statusCode: 400 }), undefined)
    }
  })
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
    const response = await handle(toWebRequest(request, rawBodies.get(request)), logger ?? request.log)
    reply.code(response.status)
    response.headers.forEach((value, name) => void reply.header(name, value))
    return reply.send(await response.text())
  }
  for (const [path, schema] of Object.entries(routeSchemas)) {
    scope.post(path, { schema }, forward)
    // Other methods reach the handler too, which answers 405 with `Allow: POST`.
    scope.route({ method: ['GET', 'PUT', 'DELETE', 'PATCH'], url: path, exposeHeadRoute: false, handler: forward })
  }
  // What the page may offer (server/info.ts); `authorize` above guards only POSTs.
  scope.get('/info', { exposeHeadRoute: false }, forward)
}

/** Fastify's own refusals (schema, JSON, body size, media type) in the protocol's `{ error }` shape. */
function replyWithError(error: FastifyError, reply: FastifyReply, logger: Logger) {
  if (error.validation) {
    const [first] = error.validation
    const field = first?.instancePath.slice(1).replace(/\//g, '.')
    return reply.code(400).send({ error: `${field || 'Request body'} ${first?.message ?? 'is invalid'}` })
  }
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
