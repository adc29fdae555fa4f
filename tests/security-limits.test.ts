// Issue 10, finding 4: nothing limited minting. One anonymous client got 596 presigned URLs/s and
// 81 STS tokens/s, and 604 start requests left 608 pending multipart uploads on RGW that nothing
// ever cleaned (storage billed for parts nobody will complete). Now the Fastify plugin rate-limits
// per client (429 + Retry-After, on by default), the Web handler takes a `throttle` hook, and
// stale multipart uploads under the key prefix are swept (on demand, on a schedule, or by the
// bucket lifecycle rule the README shows).

import { randomUUID } from 'node:crypto'
import {
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  GetBucketLifecycleConfigurationCommand,
  ListMultipartUploadsCommand,
  PutBucketLifecycleConfigurationCommand,
  type S3Client,
} from '@aws-sdk/client-s3'
import Fastify, { type FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { sdkClient } from '../dev/s3-client.ts'
import { type S3rverInstance, startS3rver } from '../dev/s3rver.ts'
import { storeConfig } from '../dev/stores.ts'
import type { PresignedMultipartReply } from '../protocol/wire.ts'
import { type S3UploadPluginOptions, s3Upload } from '../server/fastify.ts'
import {
  createUploadHandler,
  createUploadSweeper,
  type UploadHandler,
  type UploadHandlerConfig,
} from '../server/index.ts'

const MiB = 1024 * 1024
const rgw = inject('rgw')
let s3rver: S3rverInstance
let admin: S3Client
const quiet = { logger: { error: () => {}, warn: () => {} } }

beforeAll(async () => {
  s3rver = await startS3rver()
  admin = sdkClient(rgw)
})
afterAll(async () => {
  admin?.destroy()
  await s3rver?.stop()
})

const UPLOAD = { filename: 'a.bin', filetype: 'application/octet-stream', filesize: 10, strategy: 'presigned' }

describe('the Fastify plugin rate-limits per client', () => {
  async function appWith(options: Partial<S3UploadPluginOptions> = {}): Promise<FastifyInstance> {
    const app = Fastify({ logger: false })
    await app.register(s3Upload, { ...storeConfig(s3rver), ...quiet, ...options })
    return app
  }
  const start = (app: FastifyInstance, remoteAddress = '203.0.113.7') =>
    app.inject({
      method: 'POST',
      url: '/api/s3-upload',
      headers: { 'content-type': 'application/json' },
      payload: UPLOAD,
      remoteAddress,
    })

  it('by default: 120 requests a minute, then 429 with Retry-After, and no URL', async () => {
    const app = await appWith()
    for (let i = 0; i < 120; i++) expect((await start(app)).statusCode).toBe(200)
    const refused = await start(app)
    expect(refused.statusCode).toBe(429)
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0)
    expect(refused.json()).toEqual({ error: `Too many requests: try again in ${refused.headers['retry-after']} s` })
    expect(refused.body).not.toContain('X-Amz-Signature')
    // Counted per client: another address still gets through.
    expect((await start(app, '203.0.113.8')).statusCode).toBe(200)
    await app.close()
  })

  it('configurable (max 3), and off with rateLimit: false', async () => {
    const limited = await appWith({ rateLimit: { max: 3, timeWindow: 60_000 } })
    const statuses = []
    for (let i = 0; i < 4; i++) statuses.push((await start(limited)).statusCode)
    expect(statuses).toEqual([200, 200, 200, 429])
    await limited.close()
    const open = await appWith({ rateLimit: false })
    for (let i = 0; i < 130; i++) expect((await start(open)).statusCode).toBe(200)
    await open.close()
  })
})

describe('the Web handler takes a throttle', () => {
  it('a throttle answering seconds → 429 with Retry-After, before authorize, nothing issued', async () => {
    const counts = new Map<string, number>()
    let authorized = 0
    const handler: UploadHandler = createUploadHandler(
      storeConfig(s3rver, {
        ...quiet,
        // The README's example: a fixed window per client address, here 2 starts per window.
        throttle: (request, route) => {
          const client = `${request.headers.get('x-forwarded-for')} ${route}`
          counts.set(client, (counts.get(client) ?? 0) + 1)
          return counts.get(client)! > 2 ? 30 : undefined
        },
        authorize: () => {
          authorized++
          return true
        },
      }),
    )
    const call = () =>
      handler(
        new Request('http://app.test/api/s3-upload', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-forwarded-for': '198.51.100.1' },
          body: JSON.stringify(UPLOAD),
        }),
      )
    expect((await call()).status).toBe(200)
    expect((await call()).status).toBe(200)
    const refused = await call()
    expect(refused.status).toBe(429)
    expect(refused.headers.get('retry-after')).toBe('30')
    expect(await refused.json()).toEqual({ error: 'Too many requests: try again in 30 s' })
    expect(authorized).toBe(2)
  })
})

describe('stale multipart uploads are swept (RGW)', () => {
  const config = (keyPrefix: string, extra: UploadHandlerConfig = {}) =>
    storeConfig(rgw, { ...quiet, keyPrefix, ...extra })
  const pending = async (prefix: string) =>
    ((await admin.send(new ListMultipartUploadsCommand({ Bucket: rgw.bucket, Prefix: prefix }))).Uploads ?? []).map(
      (upload) => upload.Key,
    )

  async function startUploads(handler: UploadHandler, count: number): Promise<PresignedMultipartReply[]> {
    return Promise.all(
      Array.from({ length: count }, async () => {
        const response = await handler(
          new Request('http://app.test/api/s3-upload', {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ ...UPLOAD, filesize: 6 * MiB }),
          }),
        )
        expect(response.status).toBe(200)
        return (await response.json()) as PresignedMultipartReply
      }),
    )
  }

  it('those under keyPrefix older than the ticket lifetime are aborted; younger ones and other prefixes are kept', async () => {
    const prefix = `sweep-${randomUUID()}/`
    const started = await startUploads(createUploadHandler(config(prefix)), 3)
    const outside = `not-swept-${randomUUID()}/x.bin`
    await admin.send(new CreateMultipartUploadCommand({ Bucket: rgw.bucket, Key: outside }))
    expect((await pending(prefix)).sort()).toEqual(started.map((upload) => upload.key).sort())

    const sweep = createUploadSweeper(config(prefix))
    expect(await sweep()).toEqual({ skipped: false, aborted: 0, kept: 3 })
    // A day (the default ticket lifetime) and a second later: every one is past saving.
    expect(await sweep({ now: Date.now() + (86_400 + 1) * 1000 })).toEqual({ skipped: false, aborted: 3, kept: 0 })
    expect(await pending(prefix)).toEqual([])
    expect(await pending(outside)).toEqual([outside])
  })

  it('the plugin sweeps on a schedule (sweepEverySeconds)', async () => {
    const prefix = `sweep-${randomUUID()}/`
    const app = Fastify({ logger: false })
    await app.register(s3Upload, { ...config(prefix, { ticketTtlSeconds: 1 }), sweepEverySeconds: 1 })
    await app.ready()
    await startUploads(createUploadHandler(config(prefix, { ticketTtlSeconds: 1 })), 2)
    expect(await pending(prefix)).toHaveLength(2)
    await expect.poll(() => pending(prefix), { timeout: 15_000, interval: 250 }).toEqual([])
    await app.close()
  })

  it("on s3rver, which cannot list multipart uploads, a sweep fails with the store's refusal", async () => {
    await expect(createUploadSweeper(storeConfig(s3rver, quiet))()).rejects.toThrow()
  })

  it("the README's lifecycle rule is one RGW accepts", async () => {
    const bucket = `lifecycle-${randomUUID().slice(0, 8)}`
    await admin.send(new CreateBucketCommand({ Bucket: bucket }))
    const rule = {
      ID: 'abort-stale-updraft-uploads',
      Status: 'Enabled' as const,
      Filter: { Prefix: 'next-s3-uploads/' },
      AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 },
    }
    await admin.send(
      new PutBucketLifecycleConfigurationCommand({ Bucket: bucket, LifecycleConfiguration: { Rules: [rule] } }),
    )
    const stored = await admin.send(new GetBucketLifecycleConfigurationCommand({ Bucket: bucket }))
    expect(stored.Rules).toEqual([
      expect.objectContaining({
        ID: rule.ID,
        Status: 'Enabled',
        AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 },
      }),
    ])
  })
})
