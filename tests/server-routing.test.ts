// The upload API's route table under both mountings: the Web handler (createUploadHandler, called
// directly) and the Fastify plugin (app.inject). Regression: any unknown last path segment was
// taken for the upload request, so `POST …/s3-upload/complet` issued credentials.
import Fastify, { type FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startCountingProxy } from '../dev/counting-proxy.ts'
import { S3RVER_CREDENTIALS, type S3rverInstance, startS3rver } from '../dev/s3rver.ts'
import { storeConfig } from '../dev/stores.ts'
import { type StsStandIn, startStsServer } from '../dev/sts-server.ts'
import { s3Upload } from '../server/fastify.ts'
import { createUploadHandler, type UploadHandlerConfig } from '../server/index.ts'

let s3rver: S3rverInstance
let storage: Awaited<ReturnType<typeof startCountingProxy>>
let sts: StsStandIn
const apps: FastifyInstance[] = []

beforeAll(async () => {
  s3rver = await startS3rver()
  // Every request the upload API makes to storage goes through the proxy, and is counted there.
  storage = await startCountingProxy(s3rver.endpoint)
  sts = await startStsServer({ caller: S3RVER_CREDENTIALS, issue: S3RVER_CREDENTIALS })
})
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()))
  await sts?.stop()
  await storage?.stop()
  await s3rver?.stop()
})

/** With an STS, presigned URLs are signed with a session credential: signing anything calls STS too. */
const config = (extra: UploadHandlerConfig = {}): UploadHandlerConfig =>
  storeConfig(
    { ...s3rver, endpoint: storage.endpoint },
    { sts: { mode: 'federation', endpoint: sts.endpoint }, logger: { error() {}, warn() {} }, ...extra },
  )

const UPLOAD_REQUESTS = {
  token: { filename: 'a.txt', filetype: 'text/plain', filesize: 5, strategy: 'token' },
  'presigned PUT': { filename: 'a.txt', filetype: 'text/plain', filesize: 5, strategy: 'presigned' },
  'presigned multipart': {
    filename: 'big.bin',
    filetype: 'application/octet-stream',
    filesize: 20 * 1024 * 1024,
    strategy: 'presigned',
  },
}

interface Reply {
  status: number
  contentType: string | null
  text: string
}

/** One way of mounting the upload API: `ask` sends a request to a path on it. */
interface Mounting {
  ask(method: string, path: string, body?: unknown): Promise<Reply>
}

function webHandler(extra: UploadHandlerConfig = {}): Mounting {
  const handle = createUploadHandler(config(extra))
  return {
    async ask(method, path, body) {
      const request = new Request(`http://app.test${path}`, {
        method,
        headers: { 'content-type': 'application/json' },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      })
      const response = await handle(request)
      return { status: response.status, contentType: response.headers.get('content-type'), text: await response.text() }
    },
  }
}

async function fastifyPlugin(register: (app: FastifyInstance) => PromiseLike<unknown>): Promise<Mounting> {
  const app = Fastify()
  apps.push(app)
  await register(app)
  await app.ready()
  return {
    async ask(method, url, body) {
      const reply = await app.inject({
        method: method as 'POST',
        url,
        headers: { 'content-type': 'application/json' },
        ...(body !== undefined && { payload: JSON.stringify(body) }),
      })
      return { status: reply.statusCode, contentType: reply.headers['content-type'] ?? null, text: reply.body }
    },
  }
}

/** What STS and storage have been asked so far. */
const issuedSoFar = () => ({ stsCalls: sts.calls.length, storageRequests: storage.stats.requests })

/** A 404 that names what was asked and the routes that exist, and carries nothing issued. */
function expectNotFound(reply: Reply, asked: string, routes: string[]) {
  expect(reply.status).toBe(404)
  expect(reply.contentType).toMatch(/^application\/json/)
  const body = JSON.parse(reply.text) as Record<string, unknown>
  expect(Object.keys(body)).toEqual(['error'])
  expect(body.error).toContain(asked)
  for (const route of routes) expect(body.error).toContain(route)
  expect(reply.text).not.toMatch(/Credentials|SessionToken|X-Amz-Signature|uploadId|ticket|https?:\/\//)
}

const MOUNTINGS: Array<[string, () => Promise<Mounting>]> = [
  ['the Web handler', async () => webHandler()],
  ['the Fastify plugin', () => fastifyPlugin((app) => app.register(s3Upload, { ...config(), rateLimit: false }))],
]

describe.each(MOUNTINGS)('unknown paths under the upload API, through %s', (_name, mount) => {
  let mounted: Mounting
  beforeAll(async () => {
    mounted = await mount()
  })

  describe.each(Object.entries(UPLOAD_REQUESTS))('with a %s upload request as the body', (_strategy, body) => {
    it.each(['/api/s3-upload/complet', '/api/s3-upload/upload', '/api/s3-upload/parts/1', '/api/s3-upload/info/more'])(
      'POST %s: 404 with a JSON error naming the routes; nothing signed or issued',
      async (path) => {
        const before = issuedSoFar()
        const reply = await mounted.ask('POST', path, body)
        expectNotFound(reply, `POST ${path}`, [
          'POST /api/s3-upload/complete',
          'POST /api/s3-upload/parts',
          'GET /api/s3-upload/info',
        ])
        expect(issuedSoFar()).toEqual(before)
      },
    )

    // The other side of the 404s above: here the same body is issued, and the counters see it.
    it('POST /api/s3-upload, the upload API itself: issued', async () => {
      const before = issuedSoFar()
      const reply = await mounted.ask('POST', '/api/s3-upload', body)
      expect(reply.status, reply.text).toBe(200)
      expect(reply.text).toMatch(/ticket/)
      const after = issuedSoFar()
      expect(after.stsCalls + after.storageRequests).toBeGreaterThan(before.stsCalls + before.storageRequests)
    })
  })

  it('GET of an unknown path is a 404 as well, not the 405 of a known route', async () => {
    expectNotFound(await mounted.ask('GET', '/api/s3-upload/nope'), 'GET /api/s3-upload/nope', [
      'GET /api/s3-upload/info',
    ])
  })
})

describe('the Web handler outside its path', () => {
  it('answers 404 naming the path setting and the path it seems mounted at; nothing issued', async () => {
    const handler = webHandler()
    const before = issuedSoFar()
    for (const [asked, mountedAt] of [
      ['/uploads', '/uploads'],
      ['/uploads/complete', '/uploads'],
      ['/api/s3-uploads', '/api/s3-uploads'],
    ] as const) {
      const reply = await handler.ask('POST', asked, UPLOAD_REQUESTS.token)
      expect(reply.status).toBe(404)
      expect(JSON.parse(reply.text)).toEqual({
        error: `No upload API at ${asked}: this handler's path setting is '/api/s3-upload'. If you mounted it at ${mountedAt}, create it with createUploadHandler({ path: '${mountedAt}' })`,
      })
    }
    expect(issuedSoFar()).toEqual(before)
  })

  it('mounted elsewhere with `path`, answers there and nowhere else', async () => {
    const handler = webHandler({ path: '/files/' })
    expect((await handler.ask('POST', '/files', UPLOAD_REQUESTS.token)).status).toBe(200)
    expect((await handler.ask('GET', '/files/info')).status).toBe(200)
    const atDefault = await handler.ask('POST', '/api/s3-upload', UPLOAD_REQUESTS.token)
    expect(atDefault.status).toBe(404)
    expect(JSON.parse(atDefault.text).error).toContain("path setting is '/files'")
  })
})

describe('the Fastify plugin inside prefixed scopes', () => {
  it('names the whole prefix in its 404', async () => {
    const app = await fastifyPlugin((app) =>
      app.register(async (api) => api.register(s3Upload, { ...config(), prefix: '/files', rateLimit: false }), {
        prefix: '/v1',
      }),
    )
    expectNotFound(await app.ask('POST', '/v1/files/complet', UPLOAD_REQUESTS.token), 'POST /v1/files/complet', [
      'POST /v1/files/complete',
    ])
  })

  it('refuses a `path` that disagrees with its prefix, saying to use prefix', async () => {
    const app = Fastify()
    apps.push(app)
    // A config shared with a Web handler may carry `path`; the plugin's own type has no such option.
    const shared: UploadHandlerConfig = { ...config(), path: '/files' }
    await expect(app.register(s3Upload, shared)).rejects.toThrow(
      "updraft: the Fastify plugin is mounted at its prefix ('/api/s3-upload'), and path ('/files') is the Web handler's setting: pass prefix: '/files' instead",
    )
  })
})
