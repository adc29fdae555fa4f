// What several upload API instances share, in Redis: one rate limit (createRedisThrottle) and one
// sweep per period (the sweep's lock). Updraft makes one kind of call, EVAL of a short Lua script,
// so any client with ioredis's `eval(script, numKeys, ...args)` fits (ioredis itself, or a wrapper
// around node-redis or an HTTP client such as Upstash's for Workers).

/** A Redis connection as Updraft uses it: ioredis's `eval`. */
export interface RedisClient {
  /** EVAL: runs the Lua `script` with its first `numKeys` arguments as keys, the rest as arguments. */
  eval(script: string, numKeys: number, ...args: Array<string | number>): Promise<unknown>
}

/** Redis that does not answer within `ms` is treated as down: the caller goes on without it. */
export function withinMs<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Redis did not answer within ${ms} ms`)), ms)
  })
  return Promise.race([work, late]).finally(() => clearTimeout(timer))
}

/** SET NX PX: whether this caller took `key` for `ms` (no other holder until then). */
const TAKE_LOCK = "return redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) and 1 or 0"

export async function takeLock(
  redis: RedisClient,
  key: string,
  holder: string,
  ms: number,
  timeoutMs: number,
): Promise<boolean> {
  return (await withinMs(timeoutMs, redis.eval(TAKE_LOCK, 1, key, holder, ms))) === 1
}
