import rateLimiter, { type RateLimitPluginOptions } from '@fastify/rate-limit'
import type {
  FastifyError,
  FastifyInstance,
  FastifyPluginAsync,
  FastifyReply,
  FastifyRequest,
  HTTPMethods,
} from 'fastify'
import fp from 'fastify-plugin'
import { MAX_BODY_BYTES } from '../protocol/limits.ts'
import { DEFAULT_API_PATH } from '../protocol/wire.ts'
import type { Logger, UploadHandlerConfig } from './config.ts'
import { errorLogFields } from './error-log-fields.ts'
import { checkJsonContentType } from './json-body.ts'
import type { RedisClient } from './redis.ts'
import { bodyTooLarge, RequestError } from './request-error.ts'
import { ROUTES, type Route, unknownRoute } from './routes.ts'
import { sweepStaleUploads, sweepTurn } from './sweep.ts'
import { TRUSTS_EVERY_HOP, trustsEveryHop } from './trust-proxy.ts'
import { type ChargeFile, createUploadApi, type UploadApi } from './upload-api.ts'

/** Options of the {@link s3Upload} plugin: every {@link UploadHandlerConfig} setting, plus the plugin's own. */
// `path` is the Web handler's mount point; the plugin is mounted at `prefix`, Fastify's word for it.
export interface S3UploadPluginOptions extends Omit<UploadHandlerConfig, 'path'> {
  /** The upload API's path; its routes are `{prefix}`, `{prefix}/parts`, … @default '/api/s3-upload' */
  prefix?: string
  /**
   * `@fastify/rate-limit` on the upload API's routes, counted per `request.ip`; over the limit → 429
   * with Retry-After. Behind a load balancer set Fastify's `trustProxy` to the balancer's address
   * (`'10.0.0.2'`), or every visitor shares the balancer's count;
   * never `true`, which takes the X-Forwarded-For entry the client writes (the plugin warns at
   * start). A batch counts once per file, and its files past the limit get 429 in their entries
   * while the first go. `false` turns it off. @default `{ max: 120, timeWindow: 60_000 }` ({@link DEFAULT_RATE_LIMIT})
   */
  rateLimit?: false | RateLimitPluginOptions
  /**
   * Abort the multipart uploads under keyPrefix whose tickets have expired (server/sweep.ts)
   * every this many seconds while the app runs; failures are logged. @default off
   */
  sweepEverySeconds?: number
  /**
   * Several instances: a Redis they share, so that one sweep runs per `sweepEverySeconds` across
   * all of them (see `createUploadSweeper`'s `lock`). Share the rate limit too, with
   * `rateLimit: { ...DEFAULT_RATE_LIMIT, redis }`. @default none: each instance sweeps on its own
   */
  sweepLock?: RedisClient
}

/**
 * Per client IP: enough for a page uploading a few files a second (each upload is one request,
 * plus /parts every 100 parts and /complete), far below what minting credentials in a loop needs.
 * The plugin's default `rateLimit`: 120 requests a minute per client. Frozen: spread it to adjust
 * (`rateLimit: { ...DEFAULT_RATE_LIMIT, max: 600 }`).
 */
export const DEFAULT_RATE_LIMIT = Object.freeze({
  max: 120,
  timeWindow: 60_000,
} as const satisfies RateLimitPluginOptions)

/** Every route answers every method: a wrong one gets the upload API's 405 with `Allow`, as under the Web handler. */
const METHODS: HTTPMethods[] = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']

/**
 * The upload API as a Fastify plugin: `app.register(s3Upload, { prefix, ...config })`.
 * Fastify routes by the upload API's route table (server/routes.ts); each route runs the upload API's
 * preamble in `preParsing` (before Fastify reads the body) and answers in its handler, with the
 * request's pino logger.
 */
const plugin: FastifyPluginAsync<S3UploadPluginOptions> = async (
  app,
  { prefix = DEFAULT_API_PATH, rateLimit = DEFAULT_RATE_LIMIT, sweepEverySeconds, sweepLock, ...config },
) => {
  const path = (config as UploadHandlerConfig).path
  if (path !== undefined && path.replace(/\/+$/, '') !== prefix.replace(/\/+$/, '')) {
    throw new TypeError(
      `updraft: the Fastify plugin is mounted at its prefix ('${prefix}'), and path ('${path}') is the Web handler's setting: pass prefix: '${path}' instead`,
    )
  }
  const api = createUploadApi(config)
  // The limit counts per request.ip: with every hop trusted, that is whatever the client wrote.
  if (rateLimit !== false && trustsEveryHop(app))
    (config.logger ?? app.log).warn?.({ trustProxy: true }, TRUSTS_EVERY_HOP)
  // fastify-plugin skips encapsulation, and with it the register-time prefix: an inner scope
  // takes the prefix and keeps the JSON parser, hooks and error handler below to these routes.
  await app.register(
    async (scope) => {
      if (rateLimit !== false)
        await scope.register(rateLimiter, {
          errorResponseBuilder: tooManyRequests,
          ...sharedLimit(rateLimit),
          global: true,
        })
      routes(scope, api, config.logger, rateLimit === false ? undefined : fileCharger(scope))
    },
    { prefix },
  )
  const stopSweeping =
    sweepEverySeconds === undefined
      ? undefined
      : scheduleSweep(api, config.logger ?? app.log, sweepEverySeconds, sweepLock)
  app.addHook('onClose', async () => {
    await stopSweeping?.()
    api.s3.destroy()
  })
}

/**
 * The rate limit's counter for a batch's files (ChargeFile, server/upload-api.ts): the same store and
 * client key as the limit on every request, one more count per file after the first.
 */
function fileCharger(scope: FastifyInstance) {
  const limiter = scope.createRateLimit()
  return (request: FastifyRequest): ChargeFile =>
    async () => {
      const counted = await limiter(request)
      return !counted.isAllowed && counted.isExceeded ? Math.max(1, counted.ttlInSeconds) : undefined
    }
}

function routes(
  scope: FastifyInstance,
  api: UploadApi,
  logger: Logger | undefined,
  chargeFiles?: (request: FastifyRequest) => ChargeFile,
) {
  // The body goes to the upload API as the text that was sent: server/parse-requests.ts is the one
  // judge of what it holds, so every mounting answers a bad request in the same words.
  scope.addContentTypeParser(
    'application/json',
    { parseAs: 'string', bodyLimit: MAX_BODY_BYTES },
    (_request, body, done) => done(null, body),
  )
  scope.setErrorHandler((error: FastifyError, request, reply) => replyWithError(error, reply, logger ?? request.log))

  for (const [route, { path }] of Object.entries(ROUTES) as Array<[Route, (typeof ROUTES)[Route]]>) {
    scope.route({
      method: METHODS,
      url: path || '/',
      exposeHeadRoute: false,
      // Before the body is read, and after the rate limiter (which @fastify/rate-limit appends to
      // each route's onRequest): refusals (cross-site, throttle, authorize, wrong method), /info.
      preParsing: async (request, reply) => {
        // A logger passed in the options wins; else the request's pino logger, which carries reqId.
        const answered = await api.preamble(toWebRequest(request, undefined), route, logger ?? request.log)
        if (answered) return send(reply, answered)
      },
      handler: async (request, reply) =>
        send(
          reply,
          await api.respond(
            toWebRequest(request, request.body as string | undefined),
            route,
            logger ?? request.log,
            chargeFiles?.(request),
          ),
        ),
    })
  }
  // Any other path under the prefix: the upload API's 404, before any body is read.
  scope.route({
    method: METHODS,
    url: '/*',
    exposeHeadRoute: false,
    preParsing: notFound,
    handler: notFound,
  })
  async function notFound(request: FastifyRequest, reply: FastifyReply) {
    // scope.prefix is the whole mount point, an outer register's prefix included.
    const refusal = unknownRoute(request.method, new URL(request.url, 'http://localhost').pathname, scope.prefix)
    return send(reply, api.refuse(toWebRequest(request, undefined), refusal))
  }
}

async function send(reply: FastifyReply, response: Response) {
  reply.code(response.status)
  response.headers.forEach((value, name) => void reply.header(name, value))
  return reply.send(await response.text())
}

/** The Web handler's words for the same refusal (its `throttle`); Retry-After is set by the limiter. */
function tooManyRequests(_request: FastifyRequest, { statusCode, ttl }: { statusCode: number; ttl: number }) {
  return Object.assign(new Error(`Too many requests: try again in ${Math.max(1, Math.ceil(ttl / 1000))} s`), {
    statusCode,
  })
}

/**
 * A limit counted in Redis (`rateLimit.redis`, @fastify/rate-limit's store) fails open unless told
 * otherwise: with Redis down, requests go on uncounted rather than answering 500 (the reasons are
 * createRedisThrottle's). How long a request waits first is the Redis client's to bound
 * (ioredis: `maxRetriesPerRequest: 1`; docs/operations.md).
 */
function sharedLimit(options: RateLimitPluginOptions): RateLimitPluginOptions {
  return options.redis ? { skipOnError: true, nameSpace: 'updraft:rate:', ...options } : options
}

/** sweepStaleUploads every `seconds`; a failed sweep is logged and tried again next time. Returns what stops it. */
function scheduleSweep({ config, s3 }: UploadApi, logger: Logger, seconds: number, lock: RedisClient | undefined) {
  if (!Number.isSafeInteger(seconds) || seconds < 1) {
    throw new RangeError(`updraft: sweepEverySeconds must be a whole number of seconds of at least 1, got ${seconds}`)
  }
  let running: Promise<void> | undefined
  const turn = lock ? sweepTurn(config, { redis: lock, periodSeconds: seconds }) : async () => true
  const sweep = () => {
    // One at a time: a slow store must not pile sweeps up.
    running ??= turn()
      .then((mine) => (mine ? sweepStaleUploads(config, s3) : undefined))
      .then(
        () => {},
        (error: unknown) =>
          logger.error({ err: errorLogFields(error) }, 'updraft: sweeping stale multipart uploads failed'),
      )
      .finally(() => {
        running = undefined
      })
  }
  const timer = setInterval(sweep, seconds * 1000)
  timer.unref()
  return async () => {
    clearInterval(timer)
    await running
  }
}

/** Fastify's own refusals (body size, media type, rate limit) in the protocol's `{ error }` shape. */
function replyWithError(error: FastifyError, reply: FastifyReply, logger: Logger) {
  reply.header('cache-control', 'no-store')
  // Fastify stops reading at the same limit the Web handler does; the words are the protocol's.
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return reply.code(413).send({ error: bodyTooLarge().message })
  if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE')
    return reply.code(415).send({ error: jsonOnly(reply.request).message })
  const status = error.statusCode ?? 500
  if (status >= 400 && status < 500) return reply.code(status).send({ error: error.message })
  logger.error({ err: errorLogFields(error) }, 'updraft: upload API failed')
  return reply.code(500).type('text/plain; charset=utf-8').send('Internal Server Error')
}

/** The handler's own words for a body that is not JSON. */
function jsonOnly(request: FastifyRequest): RequestError {
  try {
    checkJsonContentType(request.headers['content-type'] ?? null)
  } catch (error) {
    if (error instanceof RequestError) return error
  }
  return new RequestError(415, 'Request body must be JSON sent with Content-Type: application/json')
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

/**
 * The upload API as a Fastify plugin (`fastify-plugin`, Fastify 5): the routes of
 * {@link createUploadHandler} under `prefix` (any other path under it answers 404 naming them),
 * each request refused and answered by the same code as under every other mounting, failures
 * logged with the request's pino logger, a per-client rate limit, then cross-site refusal,
 * `throttle` and `authorize`, all before the body is read. Named `updraft-s3` for other plugins'
 * `dependencies`; also the module's default export.
 *
 * @throws `TypeError` from `app.register(…)` (and so `app.ready()` / `listen()`) when a required
 * setting is missing (the message names every one, with its `S3_UPLOAD_*` variable) or invalid.
 * Requests are answered, never thrown: client mistakes with a 4xx JSON `{ error }`, anything
 * unexpected with a logged 500.
 * @example
 * ```ts
 * import Fastify from 'fastify'
 * import s3Upload from 'updraft-s3/fastify'
 *
 * const app = Fastify({ logger: true })
 * await app.register(s3Upload, {
 *   prefix: '/api/s3-upload',
 *   maxFileSize: 100 * 1024 * 1024,
 *   authorize: (request) => isSignedIn(request.headers.get('cookie')),
 *   sweepEverySeconds: 3600, // abort multipart uploads nobody finished
 * })
 * await app.listen({ port: 3000 })
 * ```
 */
export const s3Upload = fp(plugin, { fastify: '5.x', name: 'updraft-s3' })
export default s3Upload
