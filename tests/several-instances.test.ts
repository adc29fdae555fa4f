// Several upload API instances, as production runs past one process: three of them, each its own
// process, behind a real load balancer (haproxy, round robin: consecutive requests land on
// different instances) with one real Redis, in front of Ceph RGW. One client meets one limit
// whichever instance answers; an upload whose steps land on different instances completes; Redis
// stopped gives the chosen behaviour (fail open) within its bound and counting resumes when it
// returns; three sweepers at once abort each stale upload once.
import {
  AbortMultipartUploadCommand,
  CreateMultipartUploadCommand,
  ListMultipartUploadsCommand,
  type S3Client,
} from '@aws-sdk/client-s3'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { ensureDemoBuilt } from '../demo/build-page.ts'
import { freePort } from '../dev/app-process.ts'
import { type LoadBalancer, startHaproxy } from '../dev/haproxy.ts'
import { type ChromiumSession, launchChromium } from '../dev/launch-chromium.ts'
import { type RedisServer, startRedis } from '../dev/redis-server.ts'
import { readObject, sdkClient, sha256, testBytes } from '../dev/s3-client.ts'
import { storeEnv } from '../dev/stores.ts'
import type { Transport } from '../engine/core/http.ts'
import { upload } from '../engine/index.ts'
import { nodeTransport } from '../engine/transport/node-transport.ts'
import { createUploadHandler, createUploadSweeper } from '../server/index.ts'
import {
  keyFromObjectUrl,
  MiB,
  openDemo,
  pickFiles,
  rowsOf,
  settle,
  type TestFiles,
  testFiles,
} from './helpers/demo-page.ts'
import { type GroupProcess, killGroup, spawnGroup } from './helpers/process-group.ts'

const rgw = inject('rgw')
const PREFIX = '/api/s3-upload'
const LIMIT = 120
const TICKET_SECRET = 'one secret shared by every instance'

let redis: RedisServer
let admin: S3Client
const processes: GroupProcess[] = []
const balancers: LoadBalancer[] = []
let chromium: ChromiumSession | undefined
let files: TestFiles | undefined

/** The store and what instances share, as each instance's environment. */
const instanceEnv = (): NodeJS.ProcessEnv => ({
  ...process.env,
  ...storeEnv(rgw, {
    S3_UPLOAD_STS_MODE: 'assume-role',
    S3_UPLOAD_ROLE_ARN: rgw.roleArn,
    S3_UPLOAD_TICKET_SECRET: TICKET_SECRET,
  }),
  REDIS_URL: redis.url,
})

/** `count` instances of `script` (separate processes), up, behind a fresh haproxy. */
async function cluster(script: string, count = 3): Promise<string> {
  const origins: string[] = []
  for (let i = 0; i < count; i++) {
    const port = await freePort()
    processes.push(
      spawnGroup(process.execPath, ['--import', 'tsx', script], {
        ...instanceEnv(),
        PORT: String(port),
        UPDRAFT_INSTANCE: `i${i}`,
      }),
    )
    origins.push(`http://127.0.0.1:${port}`)
  }
  for (const [i, origin] of origins.entries()) await untilUp(origin, processes.at(i - count)!)
  const balancer = await startHaproxy(origins)
  balancers.push(balancer)
  return balancer.origin
}

async function untilUp(origin: string, child: GroupProcess) {
  const deadline = Date.now() + 60_000
  while (Date.now() < deadline) {
    if (child.child.exitCode !== null) throw new Error(`an instance exited:\n${child.output()}`)
    const up = await fetch(`${origin}${PREFIX}/info`, { signal: AbortSignal.timeout(1000) }).then(
      () => true,
      () => false,
    )
    if (up) return
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  throw new Error(`an instance did not answer at ${origin} within 60 s:\n${child.output()}`)
}

/** Redis emptied (a restart: nothing is persisted), so each test starts with a fresh window. */
async function freshWindow() {
  await redis.kill()
  await redis.restart()
  // The instances' clients reconnect on their own; wait until a counted request proves it.
  await new Promise((resolve) => setTimeout(resolve, 1500))
}

/** `n` requests one after another; each reply's status and the instance that answered. */
async function requests(n: number, send: () => Promise<Response>) {
  const replies: Array<{ status: number; instance: string | null; ms: number }> = []
  for (let i = 0; i < n; i++) {
    const started = performance.now()
    const response = await send()
    await response.arrayBuffer()
    replies.push({
      status: response.status,
      instance: response.headers.get('x-updraft-instance'),
      ms: performance.now() - started,
    })
  }
  return replies
}

beforeAll(async () => {
  await ensureDemoBuilt()
  redis = await startRedis()
  admin = sdkClient(rgw)
}, 180_000)
afterAll(async () => {
  await chromium?.close()
  await files?.remove()
  for (const balancer of balancers) await balancer.stop()
  for (const { child } of processes) killGroup(child)
  await redis?.stop()
  admin?.destroy()
})

describe('three Fastify instances (the demo app) behind haproxy, sharing Redis', () => {
  let origin: string
  beforeAll(async () => {
    origin = await cluster('demo/instance.ts')
  }, 120_000)

  const info = () => fetch(`${origin}${PREFIX}/info`)

  it(`one client meets one limit: ${LIMIT} requests in a minute pass, spread over all three, and the next gets 429 whichever instance answers`, async () => {
    await freshWindow()
    const allowed = await requests(LIMIT, info)
    expect(allowed.filter(({ status }) => status !== 200)).toEqual([])
    expect(new Set(allowed.map(({ instance }) => instance))).toEqual(new Set(['i0', 'i1', 'i2']))
    const over = await requests(3, info)
    expect(over.map(({ status }) => status)).toEqual([429, 429, 429])
    expect(new Set(over.map(({ instance }) => instance)).size).toBe(3)
  })

  it('Redis stopped: requests go on uncounted at once (fail open), and counting resumes when it returns', async () => {
    await redis.kill()
    // Counted, not timed: one request over the limit, and every one answered, so none was counted.
    // (Had each waited out ioredis's ~3 s offline queue, the 121 would outlast the test's timeout;
    // how long one takes with Redis down is a row of `npm run bench -- upload-api`.)
    const whileDown = await requests(LIMIT + 1, info)
    expect(whileDown.filter(({ status }) => status !== 200)).toEqual([])
    console.log(
      `Fastify instances, Redis down: ${LIMIT + 1} requests answered 200, slowest ${Math.max(...whileDown.map(({ ms }) => ms)).toFixed(0)} ms`,
    )
    await redis.restart()
    await new Promise((resolve) => setTimeout(resolve, 1500))
    const after = await requests(LIMIT + 1, info)
    expect(after.slice(0, LIMIT).filter(({ status }) => status !== 200)).toEqual([])
    expect(after.at(-1)!.status).toBe(429)
  })

  it('an upload whose steps land on different instances completes byte-exact, in both modes, from Node', async () => {
    await freshWindow()
    for (const strategy of ['presigned', 'token'] as const) {
      const answered = new Set<string>()
      const transport: Transport = async (request) => {
        const response = await nodeTransport(request)
        const instance = response.header('x-updraft-instance')
        if (instance) answered.add(instance)
        return response
      }
      const bytes = testBytes(12 * MiB, strategy.length)
      const result = await upload(new Blob([bytes]), {
        api: `${origin}${PREFIX}`,
        strategy,
        transport,
        partSize: 5 * MiB,
        retry: { limit: 0 },
      })
      expect(sha256(await readObject(admin, result.bucket, result.key)), strategy).toBe(sha256(bytes))
      expect(
        answered.size,
        `${strategy}: its upload API calls were answered by ${[...answered].join(', ')}`,
      ).toBeGreaterThan(1)
    }
  })

  it('an upload from the demo page in Chromium, through the load balancer, completes byte-exact', async () => {
    await freshWindow()
    chromium = await launchChromium()
    files = await testFiles()
    const page = await chromium.newPage()
    await openDemo(page, origin)
    const path = await files.write('across-instances.bin', 12 * MiB, 5)
    await pickFiles(page, [path])
    const row = await settle(rowsOf(page, 'across-instances.bin'))
    expect(row.status, row.text).toBe('done')
    const key = keyFromObjectUrl(row.url!, rgw.bucket)
    expect(sha256(await readObject(admin, rgw.bucket, key))).toBe(sha256(testBytes(12 * MiB, 5)))
    await page.close()
  })
})

describe('three Web handler instances (createRedisThrottle) behind haproxy, sharing Redis', () => {
  let origin: string
  beforeAll(async () => {
    origin = await cluster('tests/helpers/web-instance.ts')
  }, 120_000)

  // The throttle runs before the body is read: an empty body is counted, then refused with 400.
  const post = () =>
    fetch(`${origin}${PREFIX}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })

  it(`one client meets one limit: ${LIMIT} requests pass (to the body check), the next gets 429 with Retry-After`, async () => {
    await freshWindow()
    const allowed = await requests(LIMIT, post)
    expect(allowed.filter(({ status }) => status !== 400)).toEqual([])
    expect(new Set(allowed.map(({ instance }) => instance))).toEqual(new Set(['i0', 'i1', 'i2']))
    const over = await post()
    expect(over.status).toBe(429)
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(Number(over.headers.get('retry-after'))).toBeLessThanOrEqual(60)
  })

  it('Redis stopped: requests go on uncounted, and counting resumes when it returns', async () => {
    await redis.kill()
    // As above: one over the limit, every one let through to the body check, none counted.
    const whileDown = await requests(LIMIT + 1, post)
    expect(whileDown.filter(({ status }) => status !== 400)).toEqual([])
    console.log(`Web instances, Redis down: slowest ${Math.max(...whileDown.map(({ ms }) => ms)).toFixed(0)} ms`)
    await redis.restart()
    await new Promise((resolve) => setTimeout(resolve, 1500))
    const after = await requests(LIMIT + 1, post)
    expect(after.slice(0, LIMIT).filter(({ status }) => status !== 400)).toEqual([])
    expect(after.at(-1)!.status).toBe(429)
  })
})

describe('instances that disagree on the ticket secret', () => {
  it('a ticket another instance signed with another secret gets a 403 that says so; an altered one does not', async () => {
    const config = (ticketSecret: string) => ({
      accessKeyId: rgw.credentials.accessKeyId,
      secretAccessKey: rgw.credentials.secretAccessKey,
      bucket: rgw.bucket,
      region: rgw.region,
      endpoint: rgw.endpoint,
      forcePathStyle: true,
      presignWith: 'server-key' as const,
      ticketSecret,
      logger: { error: () => {}, warn: () => {} },
    })
    const [one, other] = [createUploadHandler(config('first')), createUploadHandler(config('second'))]
    const post = (handler: typeof one, route: string, body: unknown) =>
      handler(
        new Request(`http://app.test${PREFIX}${route}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        }),
      )
    const issued = await post(one, '', {
      filename: 'a.bin',
      filetype: 'application/octet-stream',
      filesize: 6 * MiB,
      strategy: 'presigned',
    })
    const { ticket } = (await issued.json()) as { ticket: string }
    const elsewhere = await post(other, '/parts', { ticket, partNumbers: [2] })
    expect(elsewhere.status).toBe(403)
    expect(((await elsewhere.json()) as { error: string }).error).toMatch(
      /^The upload ticket was not signed with this server's ticketSecret: if several instances serve this API, give them all the same S3_UPLOAD_TICKET_SECRET/,
    )
    const [prefix, claims, signature] = ticket.split('.')
    const altered = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(claims!, 'base64url').toString()), partCount: 99 }),
    ).toString('base64url')
    expect(
      await (await post(one, '/parts', { ticket: `${prefix}.${altered}.${signature}`, partNumbers: [2] })).json(),
    ).toEqual({ error: 'The upload ticket is not valid' })
    expect((await post(one, '/parts', { ticket, partNumbers: [2] })).status).toBe(200)
    await post(one, '/abort', { ticket })
  })
})

describe('the sweep, with instances sharing Redis', () => {
  it('three sweepers at once: one sweeps, the others skip, and each stale upload is aborted once', async () => {
    const client = new Redis(redis.url, { maxRetriesPerRequest: 1 })
    try {
      const keyPrefix = `sweep-${Date.now()}/`
      const stale: string[] = []
      for (let i = 0; i < 3; i++) {
        const { UploadId } = await admin.send(
          new CreateMultipartUploadCommand({ Bucket: rgw.bucket, Key: `${keyPrefix}stale-${i}` }),
        )
        stale.push(UploadId!)
      }
      const config = {
        accessKeyId: rgw.credentials.accessKeyId,
        secretAccessKey: rgw.credentials.secretAccessKey,
        bucket: rgw.bucket,
        region: rgw.region,
        endpoint: rgw.endpoint,
        forcePathStyle: true,
        keyPrefix,
      }
      const sweepers = [1, 2, 3].map(() => createUploadSweeper(config, { lock: { redis: client, periodSeconds: 60 } }))
      // "Stale" now: every upload started before a cut-off a minute from now.
      const reports = await Promise.all(
        sweepers.map((sweep) => sweep({ now: Date.now() + 60_000, olderThanSeconds: 0 })),
      )
      expect(reports.filter(({ skipped }) => !skipped)).toHaveLength(1)
      expect(reports.reduce((sum, { aborted }) => sum + aborted, 0)).toBe(3)
      const { Uploads = [] } = await admin.send(
        new ListMultipartUploadsCommand({ Bucket: rgw.bucket, Prefix: keyPrefix }),
      )
      expect(Uploads).toEqual([])
      // Within the period, the next round of all three skips.
      expect((await Promise.all(sweepers.map((sweep) => sweep()))).every(({ skipped }) => skipped)).toBe(true)
      // What a failed test would leave behind.
      for (const [i, UploadId] of stale.entries())
        await admin
          .send(new AbortMultipartUploadCommand({ Bucket: rgw.bucket, Key: `${keyPrefix}stale-${i}`, UploadId }))
          .catch(() => {})
    } finally {
      client.disconnect()
    }
  })
})
