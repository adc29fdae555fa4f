// Token mode, federation: the handler calls GetFederationToken on a local STS stand-in that
// verifies the signed request, and the engine uploads with the credentials it hands out.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readObject, sdkClient, sha256, testBytes } from '../dev/s3-client.ts'
import { S3RVER_CREDENTIALS, type S3rverInstance, startS3rver } from '../dev/s3rver.ts'
import { type StsErrorCode, type StsStandIn, startStsServer } from '../dev/sts-server.ts'
import { uploadObject } from '../engine/index.ts'
import { TOKEN_CACHE_CONTROL, type TokenReply } from '../protocol/wire.ts'
import { createUploadHandler, type UploadHandlerConfig } from '../server/index.ts'

const SERVER_KEYS = { accessKeyId: 'AKIDUPDRAFTSERVER', secretAccessKey: 'server-secret-never-shown' }

let s3rver: S3rverInstance
let sts: StsStandIn
const logged: Array<{ obj: Record<string, unknown>; msg?: string }> = []
const logger = { error: (obj: object, msg?: string) => void logged.push({ obj: obj as Record<string, unknown>, msg }) }

beforeAll(async () => {
  s3rver = await startS3rver()
  sts = await startStsServer({ caller: SERVER_KEYS, issue: S3RVER_CREDENTIALS })
})
afterAll(async () => {
  await sts?.stop()
  await s3rver?.stop()
})

const handlerFor = (config: UploadHandlerConfig = {}) =>
  createUploadHandler({
    ...SERVER_KEYS,
    bucket: s3rver.bucket,
    region: s3rver.region,
    endpoint: s3rver.endpoint,
    forcePathStyle: true,
    sts: { mode: 'federation', endpoint: sts.endpoint },
    logger,
    ...config,
  })

const post = (body: unknown) =>
  new Request('http://app.test/api/s3-upload', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })

/** Written out by hand rather than with uploadPolicy(), so the test does not grade the code with itself. */
const expectedPolicy = (key: string) =>
  `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["s3:PutObject","s3:AbortMultipartUpload"],"Resource":["arn:aws:s3:::uploads/${key}"]},` +
  `{"Effect":"Deny","Action":"s3:PutObject","Resource":"*","Condition":{"StringEquals":{"s3:x-amz-acl":["public-read","public-read-write","authenticated-read"]}}},` +
  `{"Effect":"Deny","Action":"s3:PutObject","Resource":"*","Condition":{"StringLike":{"s3:x-amz-grant-read":"*"}}},` +
  `{"Effect":"Deny","Action":"s3:PutObject","Resource":"*","Condition":{"StringLike":{"s3:x-amz-grant-full-control":"*"}}},` +
  `{"Effect":"Deny","Action":"s3:PutObject","Resource":"*","Condition":{"StringLike":{"s3:x-amz-grant-write-acp":"*"}}}]}`

const blobOf = (bytes: Uint8Array, type = '') => new Blob([bytes as Uint8Array<ArrayBuffer>], { type })

async function uploadWithToken(reply: TokenReply, file: Blob) {
  const { Credentials } = reply.token
  return uploadObject(file, {
    bucket: reply.bucket,
    key: reply.key,
    region: reply.region,
    endpoint: reply.endpoint,
    forcePathStyle: reply.forcePathStyle,
    credentials: {
      accessKeyId: Credentials.AccessKeyId,
      secretAccessKey: Credentials.SecretAccessKey,
      sessionToken: Credentials.SessionToken,
    },
    cacheControl: TOKEN_CACHE_CONTROL,
  })
}

describe('token mode with GetFederationToken', () => {
  it('asks STS for exactly one key, then the engine uploads it byte-exact', async () => {
    const handler = handlerFor()
    const bytes = testBytes(300_000, 7)
    const response = await handler(
      post({ filename: 'holiday photo (1).png', filetype: 'image/png', filesize: bytes.length }),
    )
    expect(response.status).toBe(200)
    expect(response.headers.get('cache-control')).toBe('no-store')
    const reply = (await response.json()) as TokenReply
    expect(reply).toEqual({
      token: {
        Credentials: {
          AccessKeyId: 'S3RVER',
          SecretAccessKey: 'S3RVER',
          SessionToken: expect.stringMatching(/^stand-in-session-/),
          Expiration: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        },
      },
      key: expect.stringMatching(/^next-s3-uploads\/[0-9a-f-]{36}\/holiday-photo-\(1\)\.png$/),
      bucket: 'uploads',
      region: 'us-east-1',
      endpoint: s3rver.endpoint,
      forcePathStyle: true,
      // Signed, for /refresh and /duplicates on this key only (tests/token-refresh.test.ts).
      ticket: expect.stringMatching(/^tok1\./),
    })
    // The signed request as STS saw it, every parameter.
    expect(sts.calls.at(-1)).toEqual({
      Action: 'GetFederationToken',
      Version: '2011-06-15',
      Name: 'S3UploadWebToken',
      DurationSeconds: '3600',
      Policy: expectedPolicy(reply.key),
    })

    const result = await uploadWithToken(reply, blobOf(bytes, 'image/png'))
    expect(result.key).toBe(reply.key)
    const client = sdkClient(s3rver)
    expect(sha256(await readObject(client, reply.bucket, reply.key))).toBe(sha256(bytes))
    client.destroy()
  })

  it('credentials also carry a multipart upload (6 MiB, two parts)', async () => {
    const bytes = testBytes(6 * 1024 * 1024, 8)
    const response = await handlerFor()(
      post({ filename: 'big.bin', filetype: 'application/octet-stream', filesize: bytes.length }),
    )
    const reply = (await response.json()) as TokenReply
    await uploadWithToken(reply, blobOf(bytes))
    const client = sdkClient(s3rver)
    expect(sha256(await readObject(client, reply.bucket, reply.key))).toBe(sha256(bytes))
    client.destroy()
  })

  it("answers next-s3-upload's request form with its token shape", async () => {
    for (const body of [
      { filename: 'a.txt', filetype: 'text/plain', _nextS3: { strategy: 'aws-sdk' } },
      { filename: 'a.txt', filetype: 'text/plain' },
    ]) {
      const reply = (await (await handlerFor()(post(body))).json()) as TokenReply
      expect(Object.keys(reply).sort()).toEqual([
        'bucket',
        'endpoint',
        'forcePathStyle',
        'key',
        'region',
        'ticket',
        'token',
      ])
      expect(Object.keys(reply.token.Credentials).sort()).toEqual([
        'AccessKeyId',
        'Expiration',
        'SecretAccessKey',
        'SessionToken',
      ])
    }
  })

  it('leaves endpoint and forcePathStyle out for AWS itself', async () => {
    const handler = handlerFor({ endpoint: undefined, forcePathStyle: undefined })
    const reply = (await (await handler(post({ filename: 'a.txt', filetype: 'text/plain' }))).json()) as TokenReply
    expect(Object.keys(reply).sort()).toEqual(['bucket', 'key', 'region', 'ticket', 'token'])
  })

  it.each<StsErrorCode>(['ExpiredToken', 'MalformedPolicyDocument', 'PackedPolicyTooLarge', 'RegionDisabled'])(
    'STS %s → 500 "Internal Server Error", the code only in the log',
    async (code) => {
      logged.length = 0
      sts.failNext(code)
      const response = await handlerFor()(post({ filename: 'a.txt', filetype: 'text/plain', filesize: 1 }))
      expect(response.status).toBe(500)
      expect(response.headers.get('content-type')).toMatch(/^text\/plain/)
      expect(await response.text()).toBe('Internal Server Error')
      expect(logged).toHaveLength(1)
      expect(logged[0]!.obj).toMatchObject({ route: 'upload', err: { code } })
      expect(JSON.stringify(logged)).not.toContain(SERVER_KEYS.secretAccessKey)
    },
  )

  it('a request signed with the wrong secret is refused by STS (the stand-in checks signatures)', async () => {
    logged.length = 0
    const refusedBefore = sts.refused.length
    const response = await handlerFor({ secretAccessKey: 'not-the-secret' })(
      post({ filename: 'a.txt', filetype: 'text/plain' }),
    )
    // A setting no retry can heal (issue 35): final for the page, one line naming it for the operator.
    expect(response.status).toBe(500)
    expect(await response.json()).toEqual({
      error: expect.stringMatching(/^The upload API is misconfigured: its credentials were refused\./),
      code: 'ServerMisconfigured',
    })
    expect(sts.refused.slice(refusedBefore)).toEqual([{ status: 403, code: 'SignatureDoesNotMatch' }])
    expect(logged).toHaveLength(1)
    expect(logged[0]!.obj).toEqual({ cause: 'STS SignatureDoesNotMatch' })
    expect(JSON.stringify(logged)).toMatch(
      /STS at http:\/\/127\.0\.0\.1:\d+ refused the server's request \(SignatureDoesNotMatch\): S3_UPLOAD_SECRET is not the secret of S3_UPLOAD_KEY.*npx updraft-s3 doctor/,
    )
    expect(JSON.stringify(logged)).not.toContain('not-the-secret')
  })
})
