// The credential endpoint as an app would run it: Fastify with the updraft plugin, nothing else,
// in a process of its own so the load generator does not share its event loop. Prints its URL.
import Fastify from 'fastify'
import { s3Upload } from '../../server/fastify.ts'

const { stsEndpoint, s3Endpoint, keys } = JSON.parse(process.argv[2] ?? '{}') as {
  stsEndpoint: string
  s3Endpoint: string
  keys: { accessKeyId: string; secretAccessKey: string }
}

const app = Fastify({ logger: false })
await app.register(s3Upload, {
  prefix: '/api/s3-upload',
  ...keys,
  bucket: 'uploads',
  region: 'us-east-1',
  endpoint: s3Endpoint,
  forcePathStyle: true,
  sts: { mode: 'federation', endpoint: stsEndpoint },
  // The benchmark is one client sending as fast as it can: exactly what the rate limit refuses.
  rateLimit: false,
  logger: { error: (obj: object, msg?: string) => console.error(msg, obj) },
})
const url = await app.listen({ port: 0, host: '127.0.0.1' })
console.log(url)
