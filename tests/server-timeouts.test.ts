// Every call the upload API makes through the AWS SDK has a bound (server/bounds.ts). A credentials
// source, an STS and a store that each accept the connection and never answer (a proxy in front
// of the real one, gone silent) make the page's request a 503 naming what did not answer, within
// the upload API's `timeouts`, here small; once the source answers again, the next request succeeds
// without a restart (was: every request hung for good behind the SDK's memoized credential
// promise, and storage's 30 s requestTimeout only logged a warning). The credentials the
// container endpoint serves are real ones, issued by RGW's STS; the store and STS are RGW itself.
// ~8 s: each silence costs its bound (storage: 3 attempts of 400 ms, STS the same, credentials 800 ms).

import type { S3Client } from '@aws-sdk/client-s3'
import { AssumeRoleCommand, STSClient } from '@aws-sdk/client-sts'
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest'
import { type HangProxy, startHangProxy } from '../dev/hang-proxy.ts'
import { readObject, sdkClient, sha256, testBytes } from '../dev/s3-client.ts'
import { storeConfig } from '../dev/stores.ts'
import type { PartsReply, PresignedMultipartReply, PresignedPutReply, TokenReply } from '../protocol/wire.ts'
import { createUploadHandler, type UploadHandler, type UploadHandlerConfig } from '../server/index.ts'
import {
  type ContainerCredentials,
  type CredentialsEndpoint,
  startCredentialsEndpoint,
} from './helpers/container-credentials.ts'

const rgw = inject('rgw')
const MiB = 1024 * 1024
const TIMEOUTS = { credentials: 800, sts: 400, storage: 400 }
let admin: S3Client
const proxies: HangProxy[] = []
beforeAll(() => {
  admin = sdkClient(rgw)
})
afterAll(async () => {
  for (const proxy of proxies) await proxy.stop()
  admin?.destroy()
})

async function silent(target: string) {
  const proxy = await startHangProxy(target)
  proxies.push(proxy)
  proxy.hanging = true
  return proxy
}

/** The handler with errors kept; `post` answers status and JSON (or text). */
function uploadApi(config: UploadHandlerConfig) {
  const errors: string[] = []
  const handler = createUploadHandler({
    ...config,
    timeouts: TIMEOUTS,
    logger: { error: (_obj, msg) => void errors.push(msg ?? ''), warn: () => {} },
  })
  return { handler, errors }
}

async function post(handler: UploadHandler, path: string, body: unknown) {
  const response = await handler(
    new Request(`http://app.test/api/s3-upload${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }),
  )
  const text = await response.text()
  let json: Record<string, unknown> = {}
  try {
    json = JSON.parse(text) as Record<string, unknown>
  } catch {
    json = { text }
  }
  return { status: response.status, body: json }
}

const presignedRequest = (filesize: number) => ({
  filename: 'a.bin',
  filetype: 'application/octet-stream',
  filesize,
  strategy: 'presigned',
})

describe('a store that accepts the connection and never answers', () => {
  it('a presigned multipart request (12 MiB) gets 503 naming storage; once it answers, the next upload completes byte-exact', async () => {
    const store = await silent(rgw.endpoint)
    const { handler, errors } = uploadApi(storeConfig({ ...rgw, endpoint: store.origin }))
    const refused = await post(handler, '', presignedRequest(12 * MiB))
    expect(refused).toEqual({
      status: 503,
      body: { error: expect.stringMatching(/^Storage did not answer within 400 ms: .*try again/) },
    })
    expect(store.held).toBeGreaterThan(0)
    expect(errors).toEqual([expect.stringMatching(/Storage did not answer within 400 ms/)])

    store.hanging = false
    const bytes = testBytes(12 * MiB, 91)
    const started = await post(handler, '', presignedRequest(bytes.length))
    expect(started.status).toBe(200)
    const reply = started.body as unknown as PresignedMultipartReply
    const { body: urls } = await post(handler, '/parts', { ticket: reply.ticket, partNumbers: [1, 2, 3] })
    const parts = await Promise.all(
      [1, 2, 3].map(async (n) => {
        const response = await fetch((urls as unknown as PartsReply).urls[n]!, {
          method: 'PUT',
          body: bytes.subarray((n - 1) * reply.partSize, n * reply.partSize),
        })
        expect(response.status).toBe(200)
        return { partNumber: n, etag: response.headers.get('etag')! }
      }),
    )
    expect((await post(handler, '/complete', { ticket: reply.ticket, parts })).status).toBe(200)
    expect(sha256(await readObject(admin, rgw.bucket, reply.key))).toBe(sha256(bytes))
  })

  it('/complete of a single PUT gets 503 naming storage while its HEAD goes unanswered, then 200 once it answers', async () => {
    const store = await silent(rgw.endpoint)
    store.hanging = false
    const { handler } = uploadApi(storeConfig({ ...rgw, endpoint: store.origin }))
    const bytes = testBytes(1000, 92)
    // Issued by a handler on the store itself (the same key signs the same tickets): the settings
    // check that precedes a first single PUT would open a kept-alive connection through the proxy,
    // which goes on answering once it hangs; here every storage connection /complete makes is new.
    const { body } = await post(uploadApi(storeConfig(rgw)).handler, '', presignedRequest(bytes.length))
    const reply = body as unknown as PresignedPutReply
    expect((await fetch(reply.url, { method: 'PUT', body: bytes, headers: reply.headers })).status).toBe(200)
    store.hanging = true
    expect(await post(handler, '/complete', { ticket: reply.ticket })).toMatchObject({
      status: 503,
      body: { error: expect.stringMatching(/^Storage did not answer/) },
    })
    store.hanging = false
    expect((await post(handler, '/complete', { ticket: reply.ticket })).status).toBe(200)
    expect(sha256(await readObject(admin, rgw.bucket, reply.key))).toBe(sha256(bytes))
  })
})

describe('an STS that accepts the connection and never answers', () => {
  it('a token request gets 503 naming STS; once it answers, the next one gets credentials that write byte-exact', async () => {
    const sts = await silent(rgw.endpoint)
    const { handler } = uploadApi(
      storeConfig(rgw, { sts: { mode: 'assume-role', roleArn: rgw.roleArn, endpoint: sts.origin } }),
    )
    const request = { filename: 'a.bin', filetype: 'application/octet-stream', filesize: 5, strategy: 'token' }
    expect(await post(handler, '', request)).toEqual({
      status: 503,
      body: { error: expect.stringMatching(/^STS did not answer within 400 ms/) },
    })
    sts.hanging = false
    const { status, body } = await post(handler, '', request)
    expect(status).toBe(200)
    const reply = body as unknown as TokenReply
    const { AccessKeyId, SecretAccessKey, SessionToken } = reply.token.Credentials
    const page = sdkClient({
      ...rgw,
      credentials: { accessKeyId: AccessKeyId, secretAccessKey: SecretAccessKey, sessionToken: SessionToken },
    })
    const { PutObjectCommand } = await import('@aws-sdk/client-s3')
    await page.send(new PutObjectCommand({ Bucket: reply.bucket, Key: reply.key, Body: testBytes(5, 93) }))
    page.destroy()
    expect(sha256(await readObject(admin, rgw.bucket, reply.key))).toBe(sha256(testBytes(5, 93)))
  })
})

describe('a credentials source (the container endpoint) that accepts the connection and never answers', () => {
  let container: CredentialsEndpoint
  let source: HangProxy
  beforeAll(async () => {
    const sts = new STSClient({ region: rgw.region, endpoint: rgw.endpoint, credentials: rgw.credentials })
    container = await startCredentialsEndpoint(async () => {
      const { Credentials: c } = await sts.send(
        new AssumeRoleCommand({ RoleArn: rgw.roleArn, RoleSessionName: 'container-task', DurationSeconds: 900 }),
      )
      return {
        AccessKeyId: c!.AccessKeyId!,
        SecretAccessKey: c!.SecretAccessKey!,
        Token: c!.SessionToken!,
        Expiration: c!.Expiration!.toISOString(),
      } satisfies ContainerCredentials
    })
    source = await silent(container.url)
    vi.stubEnv('AWS_CONTAINER_CREDENTIALS_FULL_URI', `${source.origin}${new URL(container.url).pathname}`)
    vi.stubEnv('AWS_EC2_METADATA_DISABLED', 'true')
    for (const name of [
      'AWS_ACCESS_KEY_ID',
      'AWS_SECRET_ACCESS_KEY',
      'AWS_SESSION_TOKEN',
      'AWS_PROFILE',
      'S3_UPLOAD_KEY',
      'S3_UPLOAD_SECRET',
    ])
      vi.stubEnv(name, '')
  })
  afterAll(async () => {
    await container?.stop()
    vi.unstubAllEnvs()
  })

  it('a presigned request gets 503 naming the container credentials endpoint, again and again; once it answers, the next upload lands byte-exact', async () => {
    const { handler, errors } = uploadApi({
      bucket: rgw.bucket,
      region: rgw.region,
      endpoint: rgw.endpoint,
      forcePathStyle: true,
      ticketSecret: 'one secret, not derived from credentials that rotate',
    })
    for (let i = 0; i < 2; i++) {
      expect(await post(handler, '', presignedRequest(5))).toEqual({
        status: 503,
        body: {
          error: expect.stringMatching(
            /^The server's credentials source \(the container credentials endpoint\) did not answer within 800 ms/,
          ),
        },
      })
    }
    expect(errors).toHaveLength(2)
    source.hanging = false
    const bytes = testBytes(5, 94)
    const { status, body } = await post(handler, '', presignedRequest(bytes.length))
    expect(status).toBe(200)
    const reply = body as unknown as PresignedPutReply
    expect((await fetch(reply.url, { method: 'PUT', body: bytes, headers: reply.headers })).status).toBe(200)
    expect((await post(handler, '/complete', { ticket: reply.ticket })).status).toBe(200)
    expect(sha256(await readObject(admin, rgw.bucket, reply.key))).toBe(sha256(bytes))
    expect(container.served.length).toBeGreaterThan(0)
  })
})
