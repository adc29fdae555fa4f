import type { Logger } from './config.ts'
import { type RedisClient, withinMs } from './redis.ts'
import type { Route } from './routes.ts'

/** Options of {@link createRedisThrottle}. */
export interface RedisThrottleOptions {
  /** A Redis connection every instance shares (an ioredis client, or anything with its `eval`). */
  redis: RedisClient
  /** Requests a client may make per window. @default 120 (the Fastify plugin's default) */
  max?: number
  /** @default 60 */
  windowSeconds?: number
  /**
   * Who a request comes from. @default the last address in `X-Forwarded-For` — the one your load
   * balancer appended (a client can send its own list; only the last entry is the balancer's) —
   * or `'direct'` without one. Behind two proxies, pick the entry the outer one wrote.
   */
  client?: (request: Request) => string
  /** How long a request waits for Redis before it goes on, not counted. @default 250 */
  timeoutMs?: number
  /** Prefix of the counters' keys. @default 'updraft:rate:' */
  prefix?: string
  /** Told (at most once a minute) that Redis is down and requests go on uncounted. @default console */
  logger?: Pick<Logger, 'error'>
}

/** INCR, with the window's expiry set by the first request of the window; the window's ms left. */
const COUNT =
  "local n = redis.call('INCR', KEYS[1]) if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end return {n, redis.call('PTTL', KEYS[1])}"

/**
 * The Web handler's `throttle`, counted in Redis so that every instance behind a load balancer
 * meets one limit: a fixed window per client, as `@fastify/rate-limit` counts (the Fastify plugin
 * takes the same Redis as `rateLimit: { redis }`). Over the limit, the handler answers 429 with
 * Retry-After set to the window's time left.
 *
 * When Redis is down or slow, requests go on uncounted after `timeoutMs` (fail open): the limit
 * guards against minting credentials in a loop, while `authorize` and the per-key scope of what is
 * issued still hold, and refusing every upload while a cache restarts would turn its outage into
 * yours. The error is logged at most once a minute.
 *
 * @example
 * ```ts
 * import { Redis } from 'ioredis'
 * import { createRedisThrottle, createUploadHandler } from 'updraft-s3/server'
 *
 * // enableOfflineQueue: false — with Redis down a request goes on at once, rather than waiting out timeoutMs
 * const redis = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: 1, enableOfflineQueue: false, commandTimeout: 250 })
 * export const POST = createUploadHandler({ throttle: createRedisThrottle({ redis }) })
 * ```
 */
export function createRedisThrottle({
  redis,
  max = 120,
  windowSeconds = 60,
  client = lastForwardedFor,
  timeoutMs = 250,
  prefix = 'updraft:rate:',
  logger = { error: (obj, message) => console.error(message, obj) },
}: RedisThrottleOptions): (request: Request, route: Route) => Promise<number | undefined> {
  let lastLogged = -Infinity
  return async (request) => {
    try {
      const reply = (await withinMs(
        timeoutMs,
        redis.eval(COUNT, 1, prefix + client(request), windowSeconds * 1000),
      )) as [number, number]
      const [count, msLeft] = reply.map(Number) as [number, number]
      return count > max ? Math.max(1, Math.ceil(msLeft / 1000)) : undefined
    } catch (error) {
      if (Date.now() - lastLogged > 60_000) {
        lastLogged = Date.now()
        logger.error(
          { err: String(error) },
          'updraft: the rate limit could not reach Redis; requests go on uncounted until it answers',
        )
      }
      return undefined
    }
  }
}

/** The address the nearest proxy appended, else `'direct'`. */
export function lastForwardedFor(request: Request): string {
  const list = request.headers.get('x-forwarded-for')
  return list?.split(',').at(-1)?.trim() || 'direct'
}
