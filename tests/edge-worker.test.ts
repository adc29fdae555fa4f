// The Web-standard handler inside workerd (Cloudflare's Workers runtime) through miniflare:
// bundled as wrangler would, configured from bindings, reaching s3rver and RGW on 127.0.0.1.
// Needs the `nodejs_compat` flag: the handler signs tickets with node:crypto and uses Buffer (its
// presigner takes the AWS SDK's SHA-256, which the bundle's `browser` condition makes Web Crypto).
import type { S3Client } from '@aws-sdk/client-s3'
import { Miniflare } from 'miniflare'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { readObject, sdkClient, sha256, testBytes } from '../dev/s3-client.ts'
import { type S3rverInstance, startS3rver } from '../dev/s3rver.ts'
import { storeEnv, type TestStore } from '../dev/stores.ts'
import { upload } from '../engine/index.ts'
import type { PresignedPutReply, TokenReply } from '../protocol/wire.ts'
import { bundleForWorker } from './helpers/worker-bundle.ts'

const MiB = 1024 * 1024
const rgw = inject('rgw')

// Created once per isolate, at module scope: with nodejs_compat and a compatibility date on or
// after 2025-04-01, workerd puts the worker's bindings on process.env, where the handler reads
// its S3_UPLOAD_* settings as under Node.
const WORKER = `
import { createUploadHandler } from './server/index.ts'
const handle = createUploadHandler()
export default { fetch: (request) => handle(request) }
`

let s3rver: S3rverInstance
let script: string
const workers: Miniflare[] = []
const clients: S3Client[] = []

beforeAll(async () => {
  s3rver = await startS3rver()
  script = await bundleForWorker(WORKER)
})
afterAll(async () => {
  await Promise.all(workers.map((worker) => worker.dispose()))
  for (const client of clients) client.destroy()
  await s3rver?.stop()
})

/** The bundled handler in its own workerd, configured for `store`; returns its upload API URL. */
async function startWorker(store: TestStore, extra: Record<string, string> = {}) {
  const worker = new Miniflare({
    modules: true,
    script,
    compatibilityDate: '2025-09-01',
    compatibilityFlags: ['nodejs_compat'],
    bindings: storeEnv(store, extra),
  })
  workers.push(worker)
  const client = sdkClient(store)
  clients.push(client)
  return { api: new URL('/api/s3-upload', await worker.ready).href, client }
}

const post = (url: string, body: string) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body })

describe('the handler in workerd, against s3rver', () => {
  let api: string
  let client: S3Client
  beforeAll(async () => {
    ;({ api, client } = await startWorker(s3rver))
  })

  it('signs a single presigned PUT that storage accepts; bytes exact', async () => {
    const bytes = testBytes(64_000, 61)
    const response = await post(
      api,
      JSON.stringify({ filename: 'edge.txt', filetype: 'text/plain', filesize: bytes.length, strategy: 'presigned' }),
    )
    expect(response.status).toBe(200)
    const reply = (await response.json()) as PresignedPutReply
    expect(reply).toMatchObject({
      bucket: s3rver.bucket,
      endpoint: s3rver.endpoint,
      headers: { 'Content-Type': 'text/plain' },
    })
    const put = await fetch(reply.url, { method: 'PUT', headers: reply.headers, body: bytes })
    expect(put.status).toBe(200)
    expect(sha256(await readObject(client, reply.bucket, reply.key))).toBe(sha256(bytes))
  })

  it.each([
    ['single PUT', 300_000],
    ['multipart, 12 MiB: create, /parts, /complete all run in the worker', 12 * MiB],
  ])('serves upload() end to end: %s, bytes exact', async (_title, size) => {
    const bytes = testBytes(size, 62)
    const result = await upload(new File([bytes], 'edge.bin'), { api, strategy: 'presigned' })
    expect(sha256(await readObject(client, result.bucket, result.key))).toBe(sha256(bytes))
  })

  it('answers 400 with a JSON error for an invalid request', async () => {
    const empty = await post(api, JSON.stringify({ filename: '', filetype: 'text/plain' }))
    expect(empty.status).toBe(400)
    expect(empty.headers.get('content-type')).toMatch(/^application\/json/)
    expect(await empty.json()).toEqual({ error: 'filename must be a non-empty string, got ""' })
    const malformed = await post(api, '{"filename":')
    expect(malformed.status).toBe(400)
    expect(((await malformed.json()) as { error: string }).error).toMatch(/^Request body is not valid JSON: /)
  })

  it('answers 405 with Allow: POST to any other method', async () => {
    const response = await fetch(api, { method: 'PUT', body: '{}' })
    expect(response.status).toBe(405)
    expect(response.headers.get('allow')).toBe('POST')
    expect(await response.json()).toEqual({ error: 'Method PUT is not allowed: use POST' })
  })
})

describe('the handler in workerd, against RGW', () => {
  it('issues assume-role credentials (STS called from the worker) that upload() signs with; bytes exact', async () => {
    const { api, client } = await startWorker(rgw, {
      S3_UPLOAD_STS_MODE: 'assume-role',
      S3_UPLOAD_ROLE_ARN: rgw.roleArn,
    })
    const response = await post(api, JSON.stringify({ filename: 'probe.bin', filetype: '', strategy: 'token' }))
    expect(response.status).toBe(200)
    const reply = (await response.json()) as TokenReply
    expect(reply).toMatchObject({ bucket: rgw.bucket, endpoint: rgw.endpoint, forcePathStyle: true })
    expect(reply.token.Credentials.AccessKeyId).not.toBe(rgw.credentials.accessKeyId)

    // 6 MiB: two parts, signed in Node with the credentials the worker issued.
    const bytes = testBytes(6 * MiB, 63)
    const result = await upload(new File([bytes], 'edge-token.bin'), { api, strategy: 'token' })
    expect(sha256(await readObject(client, result.bucket, result.key))).toBe(sha256(bytes))
  })
})
