// Token mode, assume-role, for real against Ceph RGW's STS: the issued credentials write the
// issued key (single and multipart, read back byte-exact) and nothing else.
import {
  AbortMultipartUploadCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  ListMultipartUploadsCommand,
  type S3Client,
} from '@aws-sdk/client-s3'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { readObject, sdkClient, sha256, testBytes } from '../dev/s3-client.ts'
import { storeConfig } from '../dev/stores.ts'
import { S3Error, uploadObject } from '../engine/index.ts'
import { TOKEN_CACHE_CONTROL, type TokenReply } from '../protocol/wire.ts'
import { createUploadHandler, type UploadHandler } from '../server/index.ts'

const MiB = 1024 * 1024
const rgw = inject('rgw')
let handler: UploadHandler
let admin: S3Client
const logged: object[] = []

beforeAll(() => {
  handler = createUploadHandler(
    storeConfig(rgw, {
      // No sts.endpoint: RGW serves STS on its S3 endpoint, the default in assume-role mode.
      sts: { mode: 'assume-role', roleArn: rgw.roleArn },
      logger: { error: (obj) => void logged.push(obj) },
    }),
  )
  admin = sdkClient(rgw)
})
afterAll(() => admin?.destroy())

async function issue(filename: string, filesize: number): Promise<TokenReply> {
  const response = await handler(
    new Request('http://app.test/api/s3-upload', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ filename, filetype: 'application/octet-stream', filesize, strategy: 'token' }),
    }),
  )
  expect(logged).toEqual([])
  expect(response.status).toBe(200)
  return (await response.json()) as TokenReply
}

const credentialsOf = ({ token: { Credentials } }: TokenReply) => ({
  accessKeyId: Credentials.AccessKeyId,
  secretAccessKey: Credentials.SecretAccessKey,
  sessionToken: Credentials.SessionToken,
})

const upload = (reply: TokenReply, bytes: Uint8Array, key = reply.key) =>
  uploadObject(new Blob([bytes as Uint8Array<ArrayBuffer>]), {
    bucket: reply.bucket,
    key,
    region: reply.region,
    endpoint: reply.endpoint,
    forcePathStyle: reply.forcePathStyle,
    credentials: credentialsOf(reply),
    cacheControl: TOKEN_CACHE_CONTROL,
    retry: { limit: 0 },
  })

describe('assume-role credentials from RGW', () => {
  it('answer in the token shape, for a custom store', async () => {
    const reply = await issue('report.pdf', 10)
    expect(reply).toEqual({
      token: {
        Credentials: {
          AccessKeyId: expect.any(String),
          SecretAccessKey: expect.any(String),
          SessionToken: expect.any(String),
          Expiration: expect.stringMatching(/Z$/),
        },
      },
      key: expect.stringMatching(/^next-s3-uploads\/[0-9a-f-]{36}\/report\.pdf$/),
      bucket: rgw.bucket,
      region: rgw.region,
      endpoint: rgw.endpoint,
      forcePathStyle: true,
      ticket: expect.stringMatching(/^tok1\./),
    })
    expect(reply.token.Credentials.AccessKeyId).not.toBe(rgw.credentials.accessKeyId)
  })

  it('upload the issued key in one PUT, byte-exact', async () => {
    const bytes = testBytes(123_457, 21)
    const reply = await issue('one.bin', bytes.length)
    const result = await upload(reply, bytes)
    expect(result.key).toBe(reply.key)
    expect(sha256(await readObject(admin, reply.bucket, reply.key))).toBe(sha256(bytes))
  })

  it('upload the issued key in parts (11 MiB), byte-exact', async () => {
    const bytes = testBytes(11 * MiB, 22)
    const reply = await issue('many.bin', bytes.length)
    await upload(reply, bytes)
    expect(sha256(await readObject(admin, reply.bucket, reply.key))).toBe(sha256(bytes))
  })

  it('get AccessDenied for any other key, and for reading their own', async () => {
    const reply = await issue('mine.bin', 10)
    const bytes = testBytes(10, 23)
    for (const other of [`${reply.key}-2`, reply.key.replace(/[^/]+$/, 'other.bin'), 'next-s3-uploads/x/mine.bin']) {
      const error = await upload(reply, bytes, other).catch((caught: unknown) => caught)
      expect(error).toBeInstanceOf(S3Error)
      expect(error).toMatchObject({ code: 'AccessDenied', status: 403 })
    }
    await upload(reply, bytes)
    const scoped = sdkClient({ ...rgw, credentials: credentialsOf(reply) })
    await expect(scoped.send(new GetObjectCommand({ Bucket: reply.bucket, Key: reply.key }))).rejects.toMatchObject({
      name: 'AccessDenied',
    })
    scoped.destroy()
  })

  it('may abort their own multipart upload (the engine cleans up), not start one elsewhere', async () => {
    const reply = await issue('aborted.bin', 6 * MiB)
    const scoped = sdkClient({ ...rgw, credentials: credentialsOf(reply) })
    const { UploadId } = await scoped.send(new CreateMultipartUploadCommand({ Bucket: reply.bucket, Key: reply.key }))
    await scoped.send(new AbortMultipartUploadCommand({ Bucket: reply.bucket, Key: reply.key, UploadId }))
    const pending = await admin.send(new ListMultipartUploadsCommand({ Bucket: reply.bucket, Prefix: reply.key }))
    expect(pending.Uploads ?? []).toEqual([])
    await expect(
      scoped.send(new CreateMultipartUploadCommand({ Bucket: reply.bucket, Key: `${reply.key}.x` })),
    ).rejects.toMatchObject({
      name: 'AccessDenied',
    })
    scoped.destroy()
  })
})
