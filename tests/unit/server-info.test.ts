// `GET {prefix}/info` (server/info.ts): what the demo page may offer, derived from the config.
import Fastify from 'fastify'
import { describe, expect, it } from 'vitest'
import { MAX_BATCH_FILES } from '../../protocol/limits.ts'
import { resolveConfig, type UploadHandlerConfig } from '../../server/config.ts'
import { s3Upload } from '../../server/fastify.ts'
import { createUploadHandler } from '../../server/handler.ts'
import { serverInfo } from '../../server/info.ts'

const base: UploadHandlerConfig = {
  accessKeyId: 'AKIDEXAMPLE',
  secretAccessKey: 'secret',
  bucket: 'uploads',
  region: 'eu-west-1',
}
const info = (config: UploadHandlerConfig) => serverInfo(resolveConfig({ ...base, ...config }, {}))

describe('serverInfo', () => {
  it('offers token mode on AWS (federation) and names the store', () => {
    expect(info({})).toEqual({
      token: true,
      presigned: true,
      store: 'AWS S3 (eu-west-1) · bucket uploads',
      maxBatchFiles: MAX_BATCH_FILES,
    })
    expect(info({ endpoint: 'https://s3.eu-west-1.amazonaws.com' }).token).toBe(true)
  })

  it('offers token mode with assume-role, or federation against a named STS endpoint', () => {
    const rgw = { endpoint: 'http://127.0.0.1:7480', forcePathStyle: true }
    expect(info({ ...rgw, sts: { mode: 'assume-role', roleArn: 'arn:aws:iam:::role/up' } })).toEqual({
      token: true,
      presigned: true,
      store: 'S3-compatible store at http://127.0.0.1:7480 · bucket uploads',
      maxBatchFiles: MAX_BATCH_FILES,
    })
    expect(info({ ...rgw, sts: { endpoint: 'http://127.0.0.1:9999' } }).token).toBe(true)
  })

  it('says why not when federation would go to AWS STS for a custom store', () => {
    const r2 = info({ endpoint: 'https://abc.r2.cloudflarestorage.com', region: 'auto' })
    expect(r2).toMatchObject({ token: false, store: 'Cloudflare R2 · bucket uploads' })
    expect(r2.tokenUnavailableReason).toMatch(
      /GetFederationToken exists only on AWS STS.*S3_UPLOAD_STS_MODE=assume-role/,
    )
  })

  it('says it takes the batch form (/batch, /batch/complete), and how many files per request', () => {
    expect(info({}).maxBatchFiles).toBe(100)
  })

  it('tells the page the limits it enforces, so the page can check them first', () => {
    expect(
      info({
        maxFileSize: 31_457_280,
        allowedTypes: ['image/*', 'application/pdf'],
        sts: { mode: 'assume-role', roleArn: 'arn:aws:iam:::role/up' },
      }),
    ).toMatchObject({
      maxFileSize: 31_457_280,
      allowedTypes: ['image/*', 'application/pdf'],
    })
    expect(info({})).not.toHaveProperty('maxFileSize')
    expect(info({})).not.toHaveProperty('allowedTypes')
  })

  it("takes the app's own knowledge over the config (the embedded store)", () => {
    expect(info({ info: { store: 'embedded s3rver', tokenUnavailableReason: 'no STS here' } })).toEqual({
      token: false,
      tokenUnavailableReason: 'no STS here',
      presigned: true,
      store: 'embedded s3rver',
      maxBatchFiles: MAX_BATCH_FILES,
    })
  })
})

describe('the /info route', () => {
  it('answers GET at {path}/info on the Web handler, 405 otherwise', async () => {
    const handle = createUploadHandler({ ...base, path: '/uploads', authorize: () => false })
    const reply = await handle(new Request('http://app.test/uploads/info'))
    expect(reply.status).toBe(200) // capabilities only: open to callers `authorize` refuses
    expect(reply.headers.get('cache-control')).toBe('no-store')
    expect(await reply.json()).toEqual({
      token: true,
      presigned: true,
      store: 'AWS S3 (eu-west-1) · bucket uploads',
      maxBatchFiles: MAX_BATCH_FILES,
    })

    const post = await handle(new Request('http://app.test/uploads/info', { method: 'POST', body: '{}' }))
    expect(post.status).toBe(405)
    expect(post.headers.get('allow')).toBe('GET')
  })

  it('is served by the Fastify plugin at {prefix}/info', async () => {
    const app = Fastify()
    await app.register(s3Upload, { ...base, prefix: '/files', info: { tokenUnavailableReason: 'off' } })
    const reply = await app.inject({ method: 'GET', url: '/files/info' })
    expect(reply.statusCode).toBe(200)
    expect(reply.json()).toMatchObject({ token: false, tokenUnavailableReason: 'off', presigned: true })
    await app.close()
  })
})
