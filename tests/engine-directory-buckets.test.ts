// Issue 14, "Directory buckets (S3 Express One Zone)": `uploadObject` with `awsEndpoints()` to a
// `--x-s3` bucket calls CreateSession and signs every object request with the session it returns.
// No open store implements CreateSession: a stand-in on loopback (tests/helpers/s3express-server.ts)
// checks every signature against the sessions it issued and forwards good requests to a real
// store, s3rver and Ceph RGW (a stand-in in front of each), from which each upload is read back.
import { AwsClient } from 'aws4fetch'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { readObject, sdkClient, sha256, testBytes } from '../dev/s3-client.ts'
import { type S3rverInstance, startS3rver } from '../dev/s3rver.ts'
import { serveHandler } from '../dev/serve-handler.ts'
import type { TestStore } from '../dev/stores.ts'
import { S3Error, upload, uploadObject } from '../engine/index.ts'
import { awsEndpoints } from '../engine/opt-ins/aws-endpoints.ts'
import { learnServerTime } from '../engine/s3/clock.ts'
import { nodeTransport } from '../engine/transport/node-transport.ts'
import type { Transport } from '../engine/transport/transport.ts'
import { MIN_PART_SIZE } from '../protocol/limits.ts'
import { type S3ExpressStandIn, startS3ExpressStandIn } from './helpers/s3express-server.ts'

let s3rver: S3rverInstance
const rgw = inject('rgw')
/** A stand-in in front of each real store, so what it forwards is checked by two implementations. */
const fronts = {} as Record<'s3rver' | 'rgw', { express: S3ExpressStandIn; store: TestStore }>
/** Each test its own directory bucket: sessions are cached per bucket for the whole page (here, file). */
const NAMES = ['single', 'multi', 'expiry', 'refresh', 'forged', 'denied', 'token', 'due'] as const
const directoryBucket = (name: (typeof NAMES)[number], store: string) => `${name}-${store}--test1-az1--x-s3`
/** STS-style base credentials: the stand-in wants the token on CreateSession too. */
const BASE = { accessKeyId: 'BASEKEY', secretAccessKey: 'BASESECRET', sessionToken: 'base-sts-token' }
const multipartBytes = testBytes(3 * MIN_PART_SIZE + 7, 41)
/** How far the stand-ins' clock runs ahead of this machine's. */
let standInClockOffset = 0

beforeAll(async () => {
  s3rver = await startS3rver()
  for (const [name, store] of [
    ['s3rver', s3rver],
    ['rgw', rgw],
  ] as const) {
    const express = await startS3ExpressStandIn({
      store,
      buckets: Object.fromEntries(NAMES.map((bucket) => [directoryBucket(bucket, name), store.bucket])),
      callers: [BASE],
      now: () => Date.now() + standInClockOffset,
    })
    fronts[name] = { express, store }
  }
})
afterAll(async () => {
  for (const { express } of Object.values(fronts)) await express.stop()
  await s3rver?.stop()
})

/** The node transport, which calls `then` once, as soon as storage has accepted part 1. */
function afterPart1(then: () => void) {
  let done = false
  const transport: Transport = async (request) => {
    const reply = await nodeTransport(request)
    if (!done && /partNumber=1&/.test(request.url) && reply.status === 200) {
      done = true
      then()
    }
    return reply
  }
  return { transport, happened: () => done }
}

describe.each(['s3rver', 'rgw'] as const)(
  'uploadObject to a directory bucket, through CreateSession, in front of %s',
  (name) => {
    const [SINGLE, MULTI, EXPIRY, REFRESH, , DENIED, , DUE] = NAMES.map((bucket) =>
      directoryBucket(bucket, name),
    ) as string[] as [string, string, string, string, string, string, string, string]
    const target = (bucket: string, key: string) => ({
      bucket,
      key,
      region: 'us-east-1',
      endpoint: fronts[name].express.endpoint,
      credentials: BASE,
      ...awsEndpoints(),
    })
    const stored = (key: string) => readObject(sdkClient(fronts[name].store), fronts[name].store.bucket, key)

    it('a single PUT: one CreateSession, the object signed with the session, read back byte-exact', async () => {
      const bytes = testBytes(100_000, 40)
      const result = await uploadObject(new Blob([bytes]), target(SINGLE, 'express/single.bin'))
      expect(result).toMatchObject({
        bucket: SINGLE,
        key: 'express/single.bin',
        url: `${fronts[name].express.endpoint}/${SINGLE}/express/single.bin`,
      })
      expect(fronts[name].express.sessions.filter((b) => b === SINGLE)).toHaveLength(1)
      expect(fronts[name].express.forwarded).toContain(`PUT /${SINGLE}/express/single.bin`)
      expect(sha256(await stored('express/single.bin'))).toBe(sha256(bytes))
    })

    it('multipart, 4 parts in flight: one CreateSession shared by every request, read back byte-exact', async () => {
      const before = fronts[name].express.forwarded.length
      const result = await uploadObject(new Blob([multipartBytes]), {
        ...target(MULTI, 'express/multi.bin'),
        partSize: MIN_PART_SIZE,
        partConcurrency: 4,
      })
      expect(fronts[name].express.sessions.filter((b) => b === MULTI)).toHaveLength(1)
      const steps = fronts[name].express.forwarded
        .slice(before)
        .map((line) => line.replace(/uploadId=[^&]*/, 'uploadId').replace(/\/express\/multi\.bin/, ''))
      // RGW's Complete reply names no ETag: a HEAD, in the same session, asks the object for it.
      const head = name === 'rgw' ? [`HEAD /${MULTI}`] : []
      expect(steps.sort()).toEqual(
        [
          `POST /${MULTI}?uploads`,
          ...[1, 2, 3, 4].map((n) => `PUT /${MULTI}?partNumber=${n}&uploadId`),
          `POST /${MULTI}?uploadId`,
          ...head,
        ].sort(),
      )
      expect(result.etag).not.toBe('')
      expect(sha256(await stored('express/multi.bin'))).toBe(sha256(multipartBytes))
    })

    it('a session that expires mid-upload is refused, made again once, and the upload completes', async () => {
      // Expire every session the stand-in issued as soon as part 1 is stored.
      const { transport, happened } = afterPart1(() => fronts[name].express.expireSessions())
      const refusedBefore = fronts[name].express.refused.length
      await uploadObject(new Blob([multipartBytes]), {
        ...target(EXPIRY, 'express/expiry.bin'),
        partSize: MIN_PART_SIZE,
        partConcurrency: 1,
        transport,
      })
      expect(happened()).toBe(true)
      expect(fronts[name].express.sessions.filter((b) => b === EXPIRY)).toHaveLength(2)
      expect(fronts[name].express.refused.slice(refusedBefore)).toEqual([
        { request: expect.stringMatching(/^PUT .*partNumber=2&/), code: 'ExpiredToken' },
      ])
      expect(sha256(await stored('express/expiry.bin'))).toBe(sha256(multipartBytes))
    })

    it("a session due within a minute (on the engine's clock) is renewed before the next part, with no refusal", async () => {
      // After part 1 the servers' clock runs 250 s ahead, and the engine learns it (engine/s3/clock.ts,
      // as from a reply's Date): the 300 s session then has 50 s left, under the minute the engine
      // keeps in hand, while the stand-in still takes it.
      const { transport, happened } = afterPart1(() => {
        standInClockOffset = 250_000
        expect(learnServerTime(new Date(Date.now() + standInClockOffset).toUTCString())).toBe(true)
      })
      const refusedBefore = fronts[name].express.refused.length
      try {
        await uploadObject(new Blob([multipartBytes]), {
          ...target(DUE, 'express/due.bin'),
          partSize: MIN_PART_SIZE,
          partConcurrency: 1,
          transport,
        })
      } finally {
        standInClockOffset = 0
        learnServerTime(new Date().toUTCString())
      }
      expect(happened()).toBe(true)
      expect(fronts[name].express.sessions.filter((b) => b === DUE)).toHaveLength(2)
      expect(fronts[name].express.refused.slice(refusedBefore)).toEqual([])
      expect(sha256(await stored('express/due.bin'))).toBe(sha256(multipartBytes))
    })

    it('base credentials that CreateSession refuses are renewed (token mode /refresh), then the upload goes on', async () => {
      const asked: boolean[] = []
      const bytes = testBytes(50_000, 42)
      await uploadObject(new Blob([bytes]), {
        ...target(REFRESH, 'express/refresh.bin'),
        // As token mode's renewable credentials: stale ones until storage refuses them.
        credentials: async (refused: boolean) => {
          asked.push(refused)
          return refused ? BASE : { ...BASE, accessKeyId: 'EXPIREDKEY' }
        },
      })
      expect(asked).toContain(true)
      expect(fronts[name].express.refused).toContainEqual({
        request: `GET /${REFRESH}/?session`,
        code: 'InvalidAccessKeyId',
      })
      expect(sha256(await stored('express/refresh.bin'))).toBe(sha256(bytes))
    })

    it('fixed credentials CreateSession refuses fail the upload with the S3 error, and nothing is stored', async () => {
      const upload = uploadObject(new Blob(['nope']), {
        ...target(DENIED, 'express/denied.bin'),
        credentials: { accessKeyId: 'UNKNOWN', secretAccessKey: 'X' },
      })
      await expect(upload).rejects.toBeInstanceOf(S3Error)
      await expect(upload).rejects.toMatchObject({ status: 403, code: 'InvalidAccessKeyId' })
      await expect(stored('express/denied.bin')).rejects.toThrow()
    })
  },
)

describe('token-mode upload() with awsEndpoints() to a directory bucket', () => {
  it("signs with a session made from the upload API's credentials, renews them through /refresh when CreateSession refuses them, and completes", async () => {
    const bucket = directoryBucket('token', 's3rver')
    const routes: string[] = []
    // An upload API that hands out credentials for a directory bucket (this package's server does not:
    // a session covers the whole bucket), the first ones already expired.
    const served = await serveHandler(async (request) => {
      const route = new URL(request.url).pathname.split('/').pop()!
      routes.push(route)
      const Expiration = new Date(Date.now() + 3_600_000).toISOString()
      const credentials = (AccessKeyId: string) => ({
        Credentials: {
          AccessKeyId,
          SecretAccessKey: BASE.secretAccessKey,
          SessionToken: BASE.sessionToken,
          Expiration,
        },
      })
      if (route === 'refresh') return Response.json({ token: credentials(BASE.accessKeyId) })
      if (route === 'complete') return Response.json({ serverData: 'confirmed' })
      return Response.json({
        token: credentials('EXPIREDKEY'),
        key: 'express/token.bin',
        bucket,
        region: 'us-east-1',
        endpoint: fronts.s3rver.express.endpoint,
        ticket: 'opaque',
      })
    })
    try {
      const bytes = testBytes(2 * MIN_PART_SIZE + 5, 43)
      const result = await upload(new Blob([bytes]), {
        api: served.api,
        strategy: 'token',
        partSize: MIN_PART_SIZE,
        ...awsEndpoints(),
      })
      expect(result).toMatchObject({ bucket, key: 'express/token.bin', serverData: 'confirmed' })
      expect(routes).toEqual(['s3-upload', 'refresh', 'complete'])
      expect(fronts.s3rver.express.refused).toContainEqual({
        request: `GET /${bucket}/?session`,
        code: 'InvalidAccessKeyId',
      })
      expect(fronts.s3rver.express.sessions.filter((b) => b === bucket)).toHaveLength(1)
      expect(sha256(await readObject(sdkClient(s3rver), s3rver.bucket, 'express/token.bin'))).toBe(sha256(bytes))
    } finally {
      await served.close()
    }
  })
})

describe('the stand-in checks what it is sent (else the tests above would prove nothing)', () => {
  const express = () => fronts.s3rver.express
  const FORGED = directoryBucket('forged', 's3rver')
  const SINGLE = directoryBucket('single', 's3rver')
  const stored = (key: string) => readObject(sdkClient(s3rver), s3rver.bucket, key)
  const put = (client: AwsClient, bucket: string, key: string, headers: Record<string, string> = {}) =>
    client.fetch(`${express().endpoint}/${bucket}/${key}`, {
      method: 'PUT',
      body: 'forged',
      headers: { 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD', ...headers },
    })

  /** A session of FORGED's, as the engine would get it. */
  async function session(bucket = FORGED) {
    const client = new AwsClient({ ...BASE, service: 's3express', region: 'us-east-1' })
    const reply = await client.fetch(`${express().endpoint}/${bucket}/?session`, {
      headers: { 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' },
    })
    const xml = await reply.text()
    const pick = (tag: string) => new RegExp(`<${tag}>([^<]*)</${tag}>`).exec(xml)![1]!
    return {
      accessKeyId: pick('AccessKeyId'),
      secretAccessKey: pick('SecretAccessKey'),
      sessionToken: pick('SessionToken'),
    }
  }

  it('refuses an object request signed with the base credentials instead of a session', async () => {
    const reply = await put(
      new AwsClient({ ...BASE, service: 's3express', region: 'us-east-1' }),
      FORGED,
      'express/forged-base.bin',
    )
    expect(reply.status).toBe(403)
    expect(await reply.text()).toContain('<Code>InvalidAccessKeyId</Code>')
  })

  it('refuses a session token sent as x-amz-security-token rather than x-amz-s3session-token', async () => {
    const { sessionToken, ...keys } = await session()
    const reply = await put(
      new AwsClient({ ...keys, sessionToken, service: 's3express', region: 'us-east-1' }),
      FORGED,
      'express/forged-header.bin',
    )
    expect(reply.status).toBe(403)
    expect(await reply.text()).toContain('<Code>InvalidToken</Code>')
  })

  it('refuses a request signed as service s3 rather than s3express, and a session used on another bucket', async () => {
    const { sessionToken, ...keys } = await session()
    const asS3 = await put(
      new AwsClient({ ...keys, service: 's3', region: 'us-east-1' }),
      FORGED,
      'express/forged-s3.bin',
      { 'x-amz-s3session-token': sessionToken },
    )
    expect(asS3.status).toBe(403)
    const elsewhere = await put(
      new AwsClient({ ...keys, service: 's3express', region: 'us-east-1' }),
      SINGLE,
      'express/forged-other.bin',
      {
        'x-amz-s3session-token': sessionToken,
      },
    )
    expect(elsewhere.status).toBe(403)
    expect(await elsewhere.text()).toContain('<Code>InvalidToken</Code>')
  })

  it('accepts the same request correctly signed with the session, and it lands on the store', async () => {
    const { sessionToken, ...keys } = await session()
    const reply = await put(
      new AwsClient({ ...keys, service: 's3express', region: 'us-east-1' }),
      FORGED,
      'express/genuine.bin',
      { 'x-amz-s3session-token': sessionToken },
    )
    expect(reply.status).toBe(200)
    expect(new TextDecoder().decode(await stored('express/genuine.bin'))).toBe('forged')
    await expect(stored('express/forged-base.bin')).rejects.toThrow()
    await expect(stored('express/forged-header.bin')).rejects.toThrow()
  })
})
