// One instance of the demo behind a load balancer (`npm run demo:cluster`, tests/several-instances.test.ts):
// the page and the upload API on PORT, the store from S3_UPLOAD_* (every instance the same, with one
// S3_UPLOAD_TICKET_SECRET), and what instances must share in the Redis at REDIS_URL: the rate limit
// and the sweep's lock.
import { Redis } from 'ioredis'
import { DEFAULT_RATE_LIMIT } from '../server/fastify.ts'
import { startApp } from './app.ts'
import { readableLogger } from './readable-log.ts'

const { PORT, REDIS_URL, UPDRAFT_INSTANCE = String(process.pid), TRUST_PROXY } = process.env
if (!PORT || !REDIS_URL) {
  console.error('demo/instance.ts needs PORT and REDIS_URL (npm run demo:cluster sets them)')
  process.exit(2)
}

// A request waits for Redis at most this long: with Redis down it fails at once (no offline
// queue), and a Redis that accepts and never answers is given up on after 250 ms. Either way the
// limit fails open (server/fastify.ts) and the request goes on.
const redis = new Redis(REDIS_URL, {
  maxRetriesPerRequest: 1,
  enableOfflineQueue: false,
  commandTimeout: 250,
  connectTimeout: 1000,
})
// Reconnection is ioredis's; its errors while Redis is down are expected, not crashes.
redis.on('error', () => {})

const running = await startApp({
  port: Number(PORT),
  host: '127.0.0.1',
  buildDemo: false,
  // Only the balancer is trusted, so the rate limit counts the address it appends to
  // X-Forwarded-For, never one a client wrote before it: TRUST_PROXY names its address
  // (docs/operations.md). Unset (`npm run demo:cluster`, all on loopback, where a client shares
  // haproxy's 127.0.0.1), the one peer in front, which is haproxy: nothing else reaches the instances.
  trustProxy: TRUST_PROXY ?? ((_address: string, hop: number) => hop === 0),
  config: { rateLimit: { ...DEFAULT_RATE_LIMIT, redis }, sweepLock: redis },
  logger: readableLogger((line) => console.error(`[${UPDRAFT_INSTANCE}] ${line}`)),
})
console.log(`instance ${UPDRAFT_INSTANCE} on ${running.url}`)

const stop = async () => {
  await running.close()
  redis.disconnect()
  process.exit(0)
}
process.on('SIGTERM', () => void stop())
process.on('SIGINT', () => void stop())
