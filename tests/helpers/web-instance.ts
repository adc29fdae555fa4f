// One instance of the Web handler (createUploadHandler) in its own process, as a Next.js or Hono
// deployment runs it behind a load balancer: the store from S3_UPLOAD_*, the limit counted in the
// Redis at REDIS_URL (createRedisThrottle), served over node:http on PORT.
// Run by tests/several-instances.test.ts: `node --import tsx tests/helpers/web-instance.ts`.
import { Redis } from 'ioredis'
import { serveHandler } from '../../dev/serve-handler.ts'
import { createRedisThrottle, createUploadHandler } from '../../server/index.ts'

const { PORT, REDIS_URL } = process.env
const redis = new Redis(REDIS_URL!, { maxRetriesPerRequest: 1, enableOfflineQueue: false, connectTimeout: 1000 })
redis.on('error', () => {})
const handler = createUploadHandler({
  throttle: createRedisThrottle({ redis }),
  logger: { error: (obj, message) => console.error(message, obj) },
})
const served = await serveHandler(handler, '/api/s3-upload', Number(PORT))
console.log(`web instance on ${served.origin}`)
process.on('SIGTERM', () => void served.close().then(() => process.exit(0)))
