// The Fastify plugin: mounting (prefix, nesting, env config), the Web Request/Response
// round trip, pino logging of failures, and a whole presigned upload through app.inject.
import { Writable } from 'node:stream'
import Fastify, { type FastifyInstance, type FastifyServerOptions, type RouteOptions } from 'fastify'
import fp from 'fastify-plugin'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { readObject, sdkClient, sha256, testBytes } from '../dev/s3-client.ts'
import { type S3rverInstance, startS3rver } from '../dev/s3rver.ts'
import { storeConfig } from '../dev/stores.ts'
import type { CompleteReply, PartsReply, PresignedMultipartReply, PresignedPutReply } from '../protocol/wire.ts'
import { type S3UploadPluginOptions, s3Upload } from '../server/fastify.ts'

const MiB = 1024 * 1024
let s3rver: S3rverInstance
const apps: FastifyInstance[] = []
beforeAll(async () => {
  s3rver = await startS3rver()
})
afterEach(async () => {
  vi.unstubAllEnvs()
  await Promise.all(apps.splice(0).map((app) => app.close()))
})
afterAll(() => s3rver?.stop())

const s3rverConfig = (): S3UploadPluginOptions => storeConfig(s3rver)

async function appWith(options: S3UploadPluginOptions = s3rverConfig(), fastifyOptions: FastifyServerOptions = {}) {
  const app = Fastify(fastifyOptions)
  apps.push(app)
  await app.register(s3Upload, options)
  await app.ready()
  return app
}

const postJson = (app: FastifyInstance, url: string, body: unknown, headers: Record<string, string> = {}) =>
  app.inject({ method: 'POST', url, payload: body as object, headers })

describe('mounting', () => {
  it('serves /api/s3-upload by default, every route of the table under it, and a 404 for any other path', async () => {
    const routes: RouteOptions[] = []
    const app = Fastify()
    apps.push(app)
    app.addHook('onRoute', (route) => void routes.push(route))
    await app.register(s3Upload, s3rverConfig())
    await app.ready()
    // Every route takes every method (a wrong one gets the upload API's 405); Fastify serves
    // '/api/s3-upload/' with and without the trailing slash.
    expect(routes.map((route) => route.url).sort()).toEqual([
      '/api/s3-upload/',
      '/api/s3-upload/*',
      '/api/s3-upload/abort',
      '/api/s3-upload/batch',
      '/api/s3-upload/batch/complete',
      '/api/s3-upload/complete',
      '/api/s3-upload/duplicates',
      '/api/s3-upload/info',
      '/api/s3-upload/list-parts',
      '/api/s3-upload/parts',
      '/api/s3-upload/refresh',
    ])
  })

  it('takes a prefix, also inside a prefixed scope, and nothing stays at the default path', async () => {
    const app = Fastify()
    apps.push(app)
    await app.register(async (api) => api.register(s3Upload, { ...s3rverConfig(), prefix: '/uploads/sign' }), {
      prefix: '/v1',
    })
    const body = { filename: 'a.txt', filetype: 'text/plain', filesize: 1, strategy: 'presigned' }
    expect((await postJson(app, '/v1/uploads/sign', body)).statusCode).toBe(200)
    expect((await postJson(app, '/api/s3-upload', body)).statusCode).toBe(404)
  })

  it('is a fastify-plugin named updraft-s3 for Fastify 5: other plugins can depend on it', async () => {
    const app = Fastify()
    apps.push(app)
    await app.register(s3Upload, s3rverConfig())
    await app.register(fp(async () => {}, { name: 'after-updraft', dependencies: ['updraft-s3'] }))
    await expect(app.ready()).resolves.toBeDefined()
    expect((s3Upload as unknown as Record<symbol, unknown>)[Symbol.for('plugin-meta')]).toMatchObject({
      fastify: '5.x',
      name: 'updraft-s3',
    })
  })

  it('reads the S3_UPLOAD_* environment when given no config', async () => {
    vi.stubEnv('S3_UPLOAD_KEY', s3rver.credentials.accessKeyId)
    vi.stubEnv('S3_UPLOAD_SECRET', s3rver.credentials.secretAccessKey)
    vi.stubEnv('S3_UPLOAD_BUCKET', s3rver.bucket)
    vi.stubEnv('S3_UPLOAD_REGION', s3rver.region)
    vi.stubEnv('S3_UPLOAD_ENDPOINT', s3rver.endpoint)
    vi.stubEnv('S3_UPLOAD_FORCE_PATH_STYLE', 'true')
    const app = await appWith({})
    const response = await postJson(app, '/api/s3-upload', {
      filename: 'a.txt',
      filetype: 'text/plain',
      filesize: 3,
      strategy: 'presigned',
    })
    const reply = response.json<PresignedPutReply>()
    expect(reply.url.startsWith(`${s3rver.endpoint}/uploads/next-s3-uploads/`)).toBe(true)
  })

  it('fails to start, naming every missing setting, when the environment is incomplete', async () => {
    vi.stubEnv('S3_UPLOAD_KEY', 'AKID')
    vi.stubEnv('S3_UPLOAD_SECRET', '')
    vi.stubEnv('S3_UPLOAD_BUCKET', '')
    vi.stubEnv('S3_UPLOAD_REGION', '')
    await expect(appWith({})).rejects.toThrow(
      'updraft: missing settings: bucket (S3_UPLOAD_BUCKET), region (S3_UPLOAD_REGION), secretAccessKey (S3_UPLOAD_SECRET), as accessKeyId is set',
    )
  })
})

describe('requests and replies', () => {
  it('hands the handler the headers and URL (authorize sees cookies), and returns its headers', async () => {
    const seen: Array<{ cookie: string | null; url: string }> = []
    const app = await appWith({
      ...s3rverConfig(),
      authorize: (request) => (
        seen.push({ cookie: request.headers.get('cookie'), url: request.url }),
        request.headers.get('cookie') === 'session=ok'
      ),
    })
    const body = { filename: 'a.txt', filetype: 'text/plain', filesize: 1, strategy: 'presigned' }
    const refused = await postJson(app, '/api/s3-upload?from=test', body, { cookie: 'session=bad' })
    expect(refused.statusCode).toBe(403)
    const allowed = await postJson(app, '/api/s3-upload?from=test', body, { cookie: 'session=ok' })
    expect(allowed.statusCode).toBe(200)
    expect(allowed.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(allowed.headers['cache-control']).toBe('no-store')
    expect(seen).toEqual([
      { cookie: 'session=bad', url: 'http://localhost/api/s3-upload?from=test' },
      { cookie: 'session=ok', url: 'http://localhost/api/s3-upload?from=test' },
    ])
  })

  it('gives the key callback the body as sent, extra fields included', async () => {
    const app = await appWith({
      ...s3rverConfig(),
      key: (_request, filename, body) => `users/${String(body.userId)}/${filename}`,
    })
    const response = await postJson(app, '/api/s3-upload', {
      filename: 'cv.pdf',
      filetype: 'application/pdf',
      filesize: 9,
      strategy: 'presigned',
      userId: 42,
    })
    expect(response.json<PresignedPutReply>().key).toBe('users/42/cv.pdf')
  })

  it('logs failures with the Fastify pino logger (code and reqId), and the page gets only "Internal Server Error"', async () => {
    const lines: Array<Record<string, unknown>> = []
    const stream = new Writable({
      write(chunk, _encoding, done) {
        lines.push(JSON.parse(String(chunk)) as Record<string, unknown>)
        done()
      },
    })
    const key = () => {
      throw Object.assign(new Error('key store down'), { code: 'EKEYSTORE' })
    }
    const app = await appWith({ ...s3rverConfig(), key }, { logger: { level: 'error', stream } })
    const response = await postJson(app, '/api/s3-upload', {
      filename: 'a.bin',
      filetype: '',
      filesize: 6 * MiB,
      strategy: 'presigned',
    })
    expect(response.statusCode).toBe(500)
    expect(response.body).toBe('Internal Server Error')
    expect(response.headers['content-type']).toMatch(/^text\/plain/)
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatchObject({
      level: 50,
      msg: 'updraft: upload API failed',
      reqId: expect.any(String),
      route: 'upload',
      err: { code: 'EKEYSTORE' },
    })
    expect(JSON.stringify(lines)).not.toContain(`${s3rver.credentials.secretAccessKey}"`)
  })

  // Issue 35: a setting no retry heals is final for the page and one line for the operator, however many requests meet it.
  it('a bucket that does not exist: 500 ServerMisconfigured for a single PUT and a multipart upload alike, one pino line naming S3_UPLOAD_BUCKET', async () => {
    const lines: Array<Record<string, unknown>> = []
    const stream = new Writable({
      write(chunk, _encoding, done) {
        lines.push(JSON.parse(String(chunk)) as Record<string, unknown>)
        done()
      },
    })
    const app = await appWith({ ...s3rverConfig(), bucket: 'no-such-bucket' }, { logger: { level: 'error', stream } })
    for (const filesize of [MiB, 6 * MiB, 6 * MiB]) {
      const response = await postJson(app, '/api/s3-upload', {
        filename: 'a.bin',
        filetype: '',
        filesize,
        strategy: 'presigned',
      })
      expect(response.statusCode).toBe(500)
      expect(response.json()).toEqual({
        error: expect.stringMatching(/^The upload API is misconfigured: its bucket does not exist\./),
        code: 'ServerMisconfigured',
      })
      expect(response.body).not.toContain('no-such-bucket')
    }
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatchObject({
      level: 50,
      cause: 'Storage NoSuchBucket',
      msg: expect.stringContaining('check the spelling of S3_UPLOAD_BUCKET'),
    })
    expect(lines[0]!.msg).toContain('npx updraft-s3 doctor')
  })
})

describe('a whole presigned upload through app.inject', () => {
  it('single PUT', async () => {
    const app = await appWith()
    const bytes = testBytes(4321, 31)
    const reply = (
      await postJson(app, '/api/s3-upload', {
        filename: 'pic.png',
        filetype: 'image/png',
        filesize: bytes.length,
        strategy: 'presigned',
      })
    ).json<PresignedPutReply>()
    expect((await fetch(reply.url, { method: 'PUT', body: bytes, headers: reply.headers })).status).toBe(200)
    const client = sdkClient(s3rver)
    expect(sha256(await readObject(client, reply.bucket, reply.key))).toBe(sha256(bytes))
    client.destroy()
  })

  it('multipart: /parts in two batches, then /complete', async () => {
    const app = await appWith()
    const bytes = testBytes(16 * MiB + 10, 32)
    const started = (
      await postJson(app, '/api/s3-upload', {
        filename: 'big.bin',
        filetype: '',
        filesize: bytes.length,
        strategy: 'presigned',
      })
    ).json<PresignedMultipartReply>()
    expect(started.partCount).toBe(4)
    const urls = {
      ...(
        await postJson(app, '/api/s3-upload/parts', { ticket: started.ticket, partNumbers: [1, 2] })
      ).json<PartsReply>().urls,
      ...(
        await postJson(app, '/api/s3-upload/parts', { ticket: started.ticket, partNumbers: [3, 4] })
      ).json<PartsReply>().urls,
    }
    const parts = await Promise.all(
      [1, 2, 3, 4].map(async (partNumber) => {
        const start = (partNumber - 1) * started.partSize
        const response = await fetch(urls[partNumber]!, {
          method: 'PUT',
          body: bytes.subarray(start, start + started.partSize),
        })
        expect(response.status).toBe(200)
        return { partNumber, etag: response.headers.get('etag')! }
      }),
    )
    const completed = await postJson(app, '/api/s3-upload/complete', { ticket: started.ticket, parts })
    expect(completed.statusCode).toBe(200)
    const result = completed.json<CompleteReply>()
    expect(result.key).toBe(started.key)
    const client = sdkClient(s3rver)
    expect(sha256(await readObject(client, result.bucket, result.key))).toBe(sha256(bytes))
    client.destroy()
  })
})
