// The upload API as an app would run it: Fastify with the updraft plugin, nothing else,
// in a process of its own so the load generator does not share its event loop. Prints its URL.

import { Agent } from 'node:http'
import Fastify from 'fastify'
import { Redis } from 'ioredis'
import { s3Upload } from '../../server/fastify.ts'

const {
  stsEndpoint,
  s3Endpoint,
  s3Direct,
  keys,
  redisUrl,
  bucket = 'uploads',
  region = 'us-east-1',
  formUploads = false,
} = JSON.parse(process.argv[2] ?? '{}') as {
  /** The STS stand-in; without it the server's default STS is asked, which a store without STS refuses (presigned mode then). */
  stsEndpoint?: string
  /** Storage as pages reach it: the address in every URL and credential reply the upload API hands out. */
  s3Endpoint: string
  /**
   * The same store's own address, for the upload API's own requests to it (CreateMultipartUpload,
   * Complete, /complete's checks): a server runs next to its store, not behind a page's access
   * link (bench/network.ts puts `s3Endpoint` behind the link, as the STS stand-in is not).
   */
  s3Direct?: string
  keys: { accessKeyId: string; secretAccessKey: string }
  /** Count requests in this Redis, as instances sharing a limit do (with a limit no run reaches). */
  redisUrl?: string
  bucket?: string
  region?: string
  formUploads?: boolean
}

if (s3Direct) {
  // The SDK's node:http handler connects through http.Agent instances: connections meant for the
  // linked address go to the store itself, with the same Host header (the null sink checks no signature).
  const linked = new URL(s3Endpoint)
  const direct = new URL(s3Direct)
  const connect = Agent.prototype.createConnection
  Agent.prototype.createConnection = function (
    this: Agent,
    options: { host?: string; port?: number | string },
    ...rest: unknown[]
  ) {
    const bypass = options.host === linked.hostname && String(options.port) === linked.port
    return (connect as (...args: unknown[]) => unknown).call(
      this,
      bypass ? { ...options, host: direct.hostname, port: Number(direct.port) } : options,
      ...rest,
    )
  } as typeof connect
}

const app = Fastify({ logger: false })
await app.register(s3Upload, {
  prefix: '/api/s3-upload',
  ...keys,
  bucket,
  region,
  endpoint: s3Endpoint,
  forcePathStyle: true,
  ...(stsEndpoint && { sts: { mode: 'federation' as const, endpoint: stsEndpoint } }),
  formUploads,
  // The benchmark is one client sending as fast as it can: exactly what the rate limit refuses.
  // With Redis, every request is counted there, under a limit no run reaches: the cost of sharing it.
  rateLimit: redisUrl
    ? {
        max: 1e9,
        timeWindow: 60_000,
        redis: new Redis(redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false }),
      }
    : false,
  logger: { error: (obj: object, msg?: string) => console.error(msg, obj) },
})
const url = await app.listen({ port: 0, host: '127.0.0.1' })
console.log(url)
