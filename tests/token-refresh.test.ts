// Token mode's later routes, for real against Ceph RGW's STS: /refresh issues working credentials
// for the ticket's key only, /duplicates aborts what a retried Create left, and a /complete
// retried after its reply was lost answers the object rather than an error.
import {
  AbortMultipartUploadCommand,
  CreateMultipartUploadCommand,
  ListMultipartUploadsCommand,
  type S3Client,
} from '@aws-sdk/client-s3'
import Fastify from 'fastify'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { readObject, sdkClient, sha256, testBytes } from '../dev/s3-client.ts'
import { type S3rverInstance, startS3rver } from '../dev/s3rver.ts'
import { storeConfig } from '../dev/stores.ts'
import { S3Error, uploadObject } from '../engine/index.ts'
import type { CompleteReply, PartsReply, PresignedMultipartReply, RefreshReply, TokenReply } from '../protocol/wire.ts'
import { s3Upload } from '../server/fastify.ts'
import { createUploadHandler, type UploadHandler } from '../server/index.ts'

const MiB = 1024 * 1024
const rgw = inject('rgw')
const config = storeConfig(rgw, { sts: { mode: 'assume-role', roleArn: rgw.roleArn }, logger: { error: () => {} } })
let handler: UploadHandler
let admin: S3Client
let s3rver: S3rverInstance
let s3rverHandler: UploadHandler
beforeAll(async () => {
  handler = createUploadHandler(config)
  admin = sdkClient(rgw)
  s3rver = await startS3rver()
  s3rverHandler = createUploadHandler(storeConfig(s3rver, { logger: { error: () => {} } }))
})
afterAll(async () => {
  admin?.destroy()
  await s3rver?.stop()
})

const caller = (handle: () => UploadHandler) =>
  async function call<T>(route: string, body: unknown): Promise<{ status: number; reply: T }> {
    const response = await handle()(
      new Request(`http://app.test/api/s3-upload${route}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }),
    )
    return { status: response.status, reply: (await response.json()) as T }
  }
const call = caller(() => handler)
const callRgw = call
const callS3rver = caller(() => s3rverHandler)

const issue = async (filename: string, filesize: number) =>
  (await call<TokenReply>('', { filename, filetype: 'application/octet-stream', filesize, strategy: 'token' })).reply

const credentialsOf = ({ Credentials }: TokenReply['token']) => ({
  accessKeyId: Credentials.AccessKeyId,
  secretAccessKey: Credentials.SecretAccessKey,
  sessionToken: Credentials.SessionToken,
})

const uploadsOn = async (key: string) =>
  ((await admin.send(new ListMultipartUploadsCommand({ Bucket: rgw.bucket, Prefix: key }))).Uploads ?? []).filter(
    (u) => u.Key === key,
  )

describe('/refresh', () => {
  it('issues new credentials that write the ticket key, and no other', async () => {
    const reply = await issue('long.bin', 10)
    expect(reply.ticket).toMatch(/^tok1\./)
    const { status, reply: refreshed } = await call<RefreshReply>('/refresh', {
      ticket: reply.ticket,
      key: 'next-s3-uploads/x/other.bin',
    })
    expect(status).toBe(200)
    expect(refreshed.token.Credentials.AccessKeyId).not.toBe(reply.token.Credentials.AccessKeyId)
    const target = {
      bucket: reply.bucket,
      region: reply.region,
      endpoint: reply.endpoint,
      forcePathStyle: true,
      credentials: credentialsOf(refreshed.token),
    }
    const bytes = testBytes(10, 31)
    await uploadObject(new Blob([bytes]), { ...target, key: reply.key })
    expect(sha256(await readObject(admin, reply.bucket, reply.key))).toBe(sha256(bytes))
    const elsewhere = await uploadObject(new Blob([bytes]), { ...target, key: 'next-s3-uploads/x/other.bin' }).catch(
      (e: unknown) => e,
    )
    expect(elsewhere).toBeInstanceOf(S3Error)
    expect(elsewhere).toMatchObject({ code: 'AccessDenied' })
  })

  it('refuses a forged ticket and a multipart ticket with 403', async () => {
    const reply = await issue('forged.bin', 10)
    // A character inside the signature: the last base64url character of an HMAC-SHA256 carries
    // padding bits, so changing it may decode to the same bytes.
    const at = reply.ticket!.length - 10
    const forged = reply.ticket!.slice(0, at) + (reply.ticket![at] === 'A' ? 'B' : 'A') + reply.ticket!.slice(at + 1)
    expect(await call('/refresh', { ticket: forged })).toEqual({
      status: 403,
      reply: { error: 'The upload ticket is not valid' },
    })
    const multipart = await call<PresignedMultipartReply>('', {
      filename: 'm.bin',
      filetype: '',
      filesize: 6 * MiB,
      strategy: 'presigned',
    })
    expect(await call('/refresh', { ticket: multipart.reply.ticket })).toEqual({
      status: 403,
      reply: { error: 'The upload ticket is not valid' },
    })
    await call('/abort', { ticket: multipart.reply.ticket })
  })

  it('is routed by the Fastify plugin too', async () => {
    const app = Fastify()
    await app.register(s3Upload, config)
    const reply = await issue('fastify.bin', 10)
    const response = await app.inject({
      method: 'POST',
      url: '/api/s3-upload/refresh',
      payload: { ticket: reply.ticket },
    })
    expect(response.statusCode).toBe(200)
    expect(response.json()).toMatchObject({ token: { Credentials: { AccessKeyId: expect.any(String) } } })
    await app.close()
  })
})

describe('/duplicates', () => {
  it('aborts the other uploads a retried Create left on the key, and keeps the one in use', async () => {
    const reply = await issue('twice.bin', 6 * MiB)
    const scoped = sdkClient({ ...rgw, credentials: credentialsOf(reply.token) })
    const create = () => scoped.send(new CreateMultipartUploadCommand({ Bucket: reply.bucket, Key: reply.key }))
    const lost = await create()
    const kept = await create()
    expect(await call('/duplicates', { ticket: reply.ticket, keep: kept.UploadId })).toEqual({
      status: 200,
      reply: { aborted: 1 },
    })
    expect((await uploadsOn(reply.key)).map((u) => u.UploadId)).toEqual([kept.UploadId])
    expect(lost.UploadId).not.toBe(kept.UploadId)
    await scoped.send(
      new AbortMultipartUploadCommand({ Bucket: reply.bucket, Key: reply.key, UploadId: kept.UploadId }),
    )
    scoped.destroy()
  })
})

describe('/complete, retried after a lost reply', () => {
  // RGW completes a retried Complete again; s3rver answers it with a 500 (its upload folder is
  // gone), as other stores answer NoSuchUpload: the upload API then asks the object.
  it.each(['rgw', 's3rver'] as const)('answers the completed object on %s, not an error', async (name) => {
    const call = name === 'rgw' ? callRgw : callS3rver
    const bytes = testBytes(6 * MiB, 32)
    const { reply } = await call<PresignedMultipartReply>('', {
      filename: 'retried.bin',
      filetype: '',
      filesize: bytes.length,
      strategy: 'presigned',
    })
    const { reply: parts } = await call<PartsReply>('/parts', { ticket: reply.ticket, partNumbers: [1, 2] })
    const etags: string[] = []
    for (const [n, [start, end]] of [
      [1, [0, 5 * MiB]],
      [2, [5 * MiB, bytes.length]],
    ] as const) {
      const response = await fetch(parts.urls[n]!, { method: 'PUT', body: bytes.slice(start, end) })
      etags.push(response.headers.get('etag')!)
    }
    const complete = { ticket: reply.ticket, parts: etags.map((etag, i) => ({ partNumber: i + 1, etag })) }
    const first = await call<CompleteReply>('/complete', complete)
    expect(first.status).toBe(200)
    const again = await call<CompleteReply>('/complete', complete)
    expect(again).toEqual({ status: 200, reply: { ...first.reply, etag: expect.any(String) } })
    const reader = name === 'rgw' ? admin : sdkClient(s3rver)
    expect(sha256(await readObject(reader, reply.bucket, reply.key))).toBe(sha256(bytes))
  })

  it('claims nothing for an upload that was aborted, not completed', async () => {
    const { reply } = await call<PresignedMultipartReply>('', {
      filename: 'gone.bin',
      filetype: '',
      filesize: 6 * MiB,
      strategy: 'presigned',
    })
    await call('/abort', { ticket: reply.ticket })
    const parts = [
      { partNumber: 1, etag: '"a"' },
      { partNumber: 2, etag: '"b"' },
    ]
    // RGW 16.2 answers Complete on an aborted upload with NoSuchUpload or, oddly, a 500 InternalError
    // "This multipart completion is already in progress": either way, an error.
    const response = await handler(
      new Request('http://app.test/api/s3-upload/complete', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ticket: reply.ticket, parts }),
      }),
    )
    expect(response.status).toBeGreaterThanOrEqual(400)
  })
})
