// Token mode, with the multipart upload created and completed by the upload API (issue 16: two
// round trips fewer from the page, four in a browser). The page asks with `createMultipart`; the
// server creates the upload next to its store while it issues the credentials, the page sends
// only parts, and /complete with their ETags completes, verifies and records it. On s3rver and
// Ceph RGW, every object read back; and what a page could do with the new route, tried on both.
import {
  CompleteMultipartUploadCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  type S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3'
import { describe, expect, inject, it } from 'vitest'
import { readObject, sdkClient, sha256, testBytes } from '../dev/s3-client.ts'
import type { TestStore } from '../dev/stores.ts'
import { fetchTransport, type Transport, type UploadOptions, upload } from '../engine/index.ts'
import type { TokenReply } from '../protocol/wire.ts'
import type { UploadHandlerConfig } from '../server/index.ts'
import { uploadApiFixture } from './helpers/upload-api-fixture.ts'

const MiB = 1024 * 1024
const rgw = inject('rgw')
const { stores, uploadApiFor, tokenSts } = uploadApiFixture()

const tokenConfig = (store: TestStore): UploadHandlerConfig => ({ sts: tokenSts(store) })

/** A transport that lists the storage requests (method and query) the page itself sent. */
function storageRequests(store: TestStore) {
  const sent: string[] = []
  const transport: Transport = async (request) => {
    const response = await fetchTransport(request)
    const url = new URL(request.url)
    if (url.origin === new URL(store.endpoint).origin)
      sent.push(`${request.method} ${url.search.replace(/uploadId=[^&]+/, 'uploadId=…')} ${response.status}`)
    return response
  }
  return { sent, transport }
}

async function post<T = Record<string, unknown>>(api: string, route: string, body: unknown) {
  const response = await fetch(api + route, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  return { status: response.status, body: (await response.json()) as T & { error?: string } }
}

const uploadsOn = async (client: S3Client, bucket: string, key: string) =>
  ((await client.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: key }))).Uploads ?? []).filter(
    (u) => u.Key === key,
  )

/** The multipart uploads open on `key`, where the store can list them (s3rver answers that listing SignatureDoesNotMatch). */
const openUploads = (store: TestStore, client: S3Client, key: string) =>
  store.name === 'rgw' ? uploadsOn(client, store.bucket, key) : Promise.resolve(undefined)

const file = (bytes: Uint8Array<ArrayBuffer>, name = 'data.bin') =>
  new File([bytes], name, { type: 'application/octet-stream' })

describe.each(Object.entries(stores))('on %s', (_name, store) => {
  it('12 MiB: the upload API creates the upload, the page sends only its 3 parts, /complete completes it; bytes exact', async () => {
    const { api, calls, client } = await uploadApiFor(store(), tokenConfig(store()))
    const { sent, transport } = storageRequests(store())
    const bytes = testBytes(12 * MiB, 61)
    const result = await upload(file(bytes), { api, strategy: 'token', transport, partSize: 5 * MiB })
    expect(sha256(await readObject(client, result.bucket, result.key))).toBe(sha256(bytes))

    expect(calls.map((call) => [call.route, call.status])).toEqual([
      ['', 200],
      ['/complete', 200],
    ])
    expect(calls[0]!.body).toMatchObject({ strategy: 'token', filesize: 12 * MiB, createMultipart: true })
    const reply = calls[0]!.reply as TokenReply
    expect(reply.uploadId).toEqual(expect.any(String))
    // No CreateMultipartUpload and no Complete from the page: three UploadParts only.
    expect(sent.sort()).toEqual(
      Array(3)
        .fill('PUT ?partNumber=1&uploadId=… 200')
        .map((line, i) => line.replace('1', String(i + 1))),
    )
    const parts = calls[1]!.body.parts as Array<{ partNumber: number; etag: string }>
    expect(calls[1]!.body).toEqual({
      ticket: reply.ticket,
      parts: [1, 2, 3].map((partNumber) => ({ partNumber, etag: expect.any(String) })),
    })
    expect(parts.every(({ etag }) => /^"[0-9a-f]{32}"$/.test(etag))).toBe(true)
    // Storage's own ETag for the object (RGW's Complete sends none: the server's HEAD has it).
    expect(result.etag).toBe(
      (await client.send(new HeadObjectCommand({ Bucket: result.bucket, Key: result.key }))).ETag,
    )
    expect(await openUploads(store(), client, result.key)).toEqual(store().name === 'rgw' ? [] : undefined)
  })

  it('a page that adds headers of its own to CreateMultipartUpload creates and completes the upload itself', async () => {
    // The server names the x-amz-meta-* its pages send: /complete refuses any other (security-stored-extras.test.ts).
    const { api, calls, client } = await uploadApiFor(store(), {
      ...tokenConfig(store()),
      allowedObjectExtras: { meta: ['origin'] },
    })
    const { sent, transport } = storageRequests(store())
    const bytes = testBytes(11 * MiB, 62)
    const options: UploadOptions = {
      api,
      strategy: 'token',
      transport,
      objectHeaders: { 'x-amz-meta-origin': 'camera' },
    }
    const result = await upload(file(bytes), options)
    expect(sha256(await readObject(client, result.bucket, result.key))).toBe(sha256(bytes))
    expect(calls[0]!.body.createMultipart).toBeUndefined()
    expect((calls[0]!.reply as TokenReply).uploadId).toBeUndefined()
    expect(sent.filter((line) => line.startsWith('POST'))).toEqual(['POST ?uploads 200', 'POST ?uploadId=… 200'])
    expect(calls.map((call) => call.route)).toEqual(['', '/complete'])
    expect(calls[1]!.body.parts).toBeUndefined()
    expect((await client.send(new HeadObjectCommand({ Bucket: result.bucket, Key: result.key }))).Metadata).toEqual({
      origin: 'camera',
    })
  })

  it('a file of one part is a single PUT: nothing is asked to be created', async () => {
    const { api, calls, client } = await uploadApiFor(store(), tokenConfig(store()))
    const bytes = testBytes(5 * MiB, 63)
    const result = await upload(file(bytes), { api, strategy: 'token' })
    expect(sha256(await readObject(client, result.bucket, result.key))).toBe(sha256(bytes))
    expect(calls[0]!.body.createMultipart).toBeUndefined()
    expect((calls[0]!.reply as TokenReply).uploadId).toBeUndefined()
  })

  describe('what a page could try', () => {
    /** A created upload with its first part on storage, sent with the token credentials as a page could. */
    async function created(client: S3Client) {
      const { api } = await uploadApiFor(store(), tokenConfig(store()))
      const asked = await post<TokenReply>(api, '', {
        filename: 'x.bin',
        filetype: 'application/octet-stream',
        filesize: 6 * MiB,
        createMultipart: true,
      })
      expect(asked.status).toBe(200)
      const reply = asked.body
      const { AccessKeyId, SecretAccessKey, SessionToken } = reply.token.Credentials
      const page = sdkClient({
        ...store(),
        credentials: { accessKeyId: AccessKeyId, secretAccessKey: SecretAccessKey, sessionToken: SessionToken },
      })
      const bytes = testBytes(6 * MiB, 64)
      const put = (partNumber: number, body: Uint8Array) =>
        page.send(
          new UploadPartCommand({
            Bucket: reply.bucket,
            Key: reply.key,
            UploadId: reply.uploadId,
            PartNumber: partNumber,
            Body: body,
          }),
        )
      const etags = [(await put(1, bytes.subarray(0, 5 * MiB))).ETag!, (await put(2, bytes.subarray(5 * MiB))).ETag!]
      return { api, reply, page, bytes, etags, client }
    }

    it('parts with a ticket of an upload the page created itself: 400, nothing completed', async () => {
      const { api, client } = await uploadApiFor(store(), tokenConfig(store()))
      const plain = await post<TokenReply>(api, '', {
        filename: 'y.bin',
        filetype: 'application/octet-stream',
        filesize: 6 * MiB,
      })
      expect(plain.body.uploadId).toBeUndefined()
      const refused = await post(api, '/complete', {
        ticket: plain.body.ticket,
        parts: [{ partNumber: 1, etag: '"x"' }],
      })
      expect(refused).toEqual({
        status: 400,
        body: { error: expect.stringContaining('only for a multipart upload the upload API created') },
      })
      await expect(readObject(client, plain.body.bucket, plain.body.key)).rejects.toMatchObject({ name: 'NoSuchKey' })
    })

    it('a ticket altered to name another upload, or to claim a created one, fails the MAC (403)', async () => {
      const { api, reply, client, etags } = await created(sdkClient(store()))
      const [prefix, claims, mac] = reply.ticket!.split('.')
      const alter = (change: Record<string, unknown>) => {
        const decoded = JSON.parse(Buffer.from(claims!, 'base64url').toString())
        return `${prefix}.${Buffer.from(JSON.stringify({ ...decoded, ...change })).toString('base64url')}.${mac}`
      }
      const parts = etags.map((etag, i) => ({ partNumber: i + 1, etag }))
      expect((await post(api, '/complete', { ticket: alter({ uploadId: 'another-upload' }), parts })).status).toBe(403)
      expect(
        (await post(api, '/complete', { ticket: alter({ key: 'next-s3-uploads/other.bin' }), parts })).status,
      ).toBe(403)
      if (store().name === 'rgw') expect(await uploadsOn(client, reply.bucket, reply.key)).toHaveLength(1)
    })

    it('part lists out of bounds are refused before storage is asked (400, 413); on RGW, ETags it never gave are refused (400)', async () => {
      const { api, reply, bytes, etags, client } = await created(sdkClient(store()))
      const twice = [
        { partNumber: 1, etag: etags[0]! },
        { partNumber: 1, etag: etags[0]! },
      ]
      expect((await post(api, '/complete', { ticket: reply.ticket, parts: twice })).status).toBe(400)
      expect(
        (await post(api, '/complete', { ticket: reply.ticket, parts: [{ partNumber: 10_001, etag: etags[0]! }] }))
          .status,
      ).toBe(413)
      // s3rver completes with any ETag; RGW checks them, as AWS does.
      if (store().name === 'rgw') {
        const forged = [
          { partNumber: 1, etag: etags[0]! },
          { partNumber: 2, etag: '"00000000000000000000000000000000"' },
        ]
        expect(await post(api, '/complete', { ticket: reply.ticket, parts: forged })).toEqual({
          status: 400,
          body: { error: 'Storage refused to complete the upload: InvalidPart' },
        })
      }
      // Still open, and completed by the right list: the object is what was sent, and it is verified.
      const done = await post(api, '/complete', {
        ticket: reply.ticket,
        parts: etags.map((etag, i) => ({ partNumber: i + 1, etag })),
      })
      expect(done.status).toBe(200)
      expect(sha256(await readObject(client, reply.bucket, reply.key))).toBe(sha256(bytes))
    })

    it('a page that completes the created upload with its own credentials is still verified at /complete (no parts)', async () => {
      const { api, reply, page, bytes, etags, client } = await created(sdkClient(store()))
      await page.send(
        new CompleteMultipartUploadCommand({
          Bucket: reply.bucket,
          Key: reply.key,
          UploadId: reply.uploadId,
          MultipartUpload: { Parts: etags.map((ETag, i) => ({ PartNumber: i + 1, ETag })) },
        }),
      )
      expect((await post(api, '/complete', { ticket: reply.ticket })).status).toBe(200)
      expect(sha256(await readObject(client, reply.bucket, reply.key))).toBe(sha256(bytes))
    })

    it('createMultipart must be a boolean, and needs a declared size (400); presigned mode ignores it', async () => {
      const { api } = await uploadApiFor(store(), tokenConfig(store()))
      const base = { filename: 'z.bin', filetype: 'application/octet-stream' }
      expect(await post(api, '', { ...base, filesize: 6 * MiB, createMultipart: 'yes' })).toEqual({
        status: 400,
        body: { error: 'createMultipart must be true or false, got "yes"' },
      })
      expect((await post(api, '', { ...base, sizeUnknown: true, createMultipart: true })).status).toBe(400)
      const presigned = await post(api, '', { ...base, filesize: 1000, strategy: 'presigned', createMultipart: true })
      expect(presigned.status).toBe(200)
      expect(presigned.body).toMatchObject({ url: expect.any(String) })
      expect(presigned.body.uploadId).toBeUndefined()
    })
  })
})

describe('on rgw, when the credentials cannot be issued', () => {
  it('the upload created beside them is aborted: the page gets a 500 ServerMisconfigured and storage holds nothing', async () => {
    const key = `next-s3-uploads/${crypto.randomUUID()}/orphan.bin`
    const logged: unknown[] = []
    const { api, client } = await uploadApiFor(rgw, {
      // An STS that is not there: the create succeeds, the credentials never come.
      sts: { mode: 'assume-role', roleArn: rgw.roleArn, endpoint: 'http://127.0.0.1:9' },
      key: () => key,
      logger: { error: (entry) => void logged.push(entry), warn: () => undefined },
    })
    const response = await fetch(api, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        filename: 'orphan.bin',
        filetype: 'application/octet-stream',
        filesize: 6 * MiB,
        createMultipart: true,
      }),
    })
    expect(response.status).toBe(500)
    // An STS out of reach before it ever answered: a configuration fault, final (not retried), named.
    expect(await response.json()).toMatchObject({
      code: 'ServerMisconfigured',
      error: expect.stringMatching(/could not reach its STS/),
    })
    expect(logged).toHaveLength(1)
    expect(await uploadsOn(client, rgw.bucket, key)).toEqual([])
  })
})
