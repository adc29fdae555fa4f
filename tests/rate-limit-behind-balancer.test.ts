// One rate limit per client behind a load balancer, with the settings docs/operations.md gives:
// three Fastify instances behind haproxy (`option forwardfor`: it appends the client's address to
// X-Forwarded-For) sharing one Redis, `trustProxy` set to the balancer's address. A client that
// writes its own X-Forwarded-For on every request cannot dodge the limit: exactly `max` pass. With
// `trustProxy: true`, which the docs used to give, all 35 passed (request.ip is then the leftmost
// entry, the client's own); the plugin now warns at start about that setting.
// ~3 s: Redis, three haproxies and nine apps in this process, 105 small requests.
import { request } from 'node:http'
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { type LoadBalancer, startHaproxy } from '../dev/haproxy.ts'
import { type RedisServer, startRedis } from '../dev/redis-server.ts'
import { storeConfig } from '../dev/stores.ts'
import { DEFAULT_RATE_LIMIT, s3Upload } from '../server/fastify.ts'
import { TRUSTS_EVERY_HOP } from '../server/trust-proxy.ts'

const rgw = inject('rgw')
const MAX = 30
let redis: RedisServer
const clients: Redis[] = []
const apps: FastifyInstance[] = []
const balancers: LoadBalancer[] = []

beforeAll(async () => {
  redis = await startRedis()
})
afterAll(async () => {
  for (const balancer of balancers) await balancer.stop()
  for (const app of apps) await app.close()
  for (const client of clients) client.disconnect()
  await redis?.stop()
})

/** Three instances with these Fastify options, one Redis, behind a fresh haproxy; what each plugin warned. */
async function cluster(fastifyOptions: FastifyServerOptions) {
  const warnings: string[] = []
  const origins: string[] = []
  // Each cluster counts in its own namespace, so the two tests do not share a window.
  const nameSpace = `updraft:rate:${crypto.randomUUID()}:`
  for (let i = 0; i < 3; i++) {
    const client = new Redis(redis.url, { maxRetriesPerRequest: 1, enableOfflineQueue: false, commandTimeout: 250 })
    clients.push(client)
    const app = Fastify(fastifyOptions)
    apps.push(app)
    await app.register(
      s3Upload,
      storeConfig(rgw, {
        logger: { error: () => {}, warn: (_obj: object, msg?: string) => void warnings.push(msg ?? '') },
        rateLimit: { ...DEFAULT_RATE_LIMIT, max: MAX, redis: client, nameSpace },
      } as object),
    )
    await app.listen({ port: 0, host: '127.0.0.1' })
    const { port } = app.server.address() as { port: number }
    origins.push(`http://127.0.0.1:${port}`)
  }
  const balancer = await startHaproxy(origins)
  balancers.push(balancer)
  return { origin: balancer.origin, warnings }
}

/**
 * The client's address: on loopback the balancer is 127.0.0.1, so the client comes from another
 * loopback address, as it would from another machine (a trusted 127.0.0.1 would trust it too).
 */
const CLIENT_ADDRESS = '127.0.0.2'

/** A GET from `from` (CLIENT_ADDRESS unless another client's); its status. */
const get = (url: string, headers: Record<string, string>, from = CLIENT_ADDRESS) =>
  new Promise<number>((resolve, reject) => {
    const sent = request(url, { headers, localAddress: from }, (response) => {
      response.resume()
      response.on('end', () => resolve(response.statusCode!))
    })
    sent.on('error', reject)
    sent.end()
  })

/** 35 requests from one address, each claiming another in X-Forwarded-For; their statuses. */
async function forgedRequests(origin: string) {
  const statuses: number[] = []
  for (let n = 1; n <= MAX + 5; n++)
    statuses.push(await get(`${origin}/api/s3-upload/info`, { 'x-forwarded-for': `198.51.100.${n}` }))
  return statuses
}

describe('three Fastify instances behind haproxy, one Redis, rateLimit max 30', () => {
  it.each<[string, FastifyServerOptions['trustProxy']]>([
    ["the balancer's address (the documented setting)", '127.0.0.1'],
    [
      'a function trusting the one peer in front (the demo cluster’s, all on loopback)',
      (_address: string, hop: number) => hop === 0,
    ],
  ])('with trustProxy set to %s: exactly 30 of 35 forged-address requests pass', async (_what, trustProxy) => {
    const { origin, warnings } = await cluster({ trustProxy })
    const statuses = await forgedRequests(origin)
    expect(statuses.filter((status) => status === 200)).toHaveLength(MAX)
    expect(statuses.slice(MAX)).toEqual([429, 429, 429, 429, 429])
    // Counted per client, not one count for everyone behind the balancer: another address still passes.
    expect(await get(`${origin}/api/s3-upload/info`, {}, '127.0.0.3')).toBe(200)
    expect(warnings.filter((warning) => warning === TRUSTS_EVERY_HOP)).toEqual([])
  })

  it('with trustProxy: true every forged address is another client, all 35 pass: the plugin warns at start, saying what to set', async () => {
    const { origin, warnings } = await cluster({ trustProxy: true })
    expect(warnings.filter((warning) => warning === TRUSTS_EVERY_HOP)).toHaveLength(3)
    expect(TRUSTS_EVERY_HOP).toMatch(
      /leftmost X-Forwarded-For entry, which a client writes itself.*trustProxy: '10\.0\.0\.2'/,
    )
    expect(await forgedRequests(origin)).toEqual(Array(MAX + 5).fill(200))
  })
})
