// Wire compatibility with next-s3-upload (0.3.4, node_modules/next-s3-upload/dist), both ways:
// (a) requests as its client sends them get its response shapes from this handler, and its
//     client's next step (a PUT, or an SDK upload with the token) works;
// (b) this engine works against a route that answers only as next-s3-upload's route does.
import { HeadObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3'
import { Upload } from '@aws-sdk/lib-storage'
import { getSignedUrl } from '@aws-sdk/s3-request-presigner'
import { describe, expect, inject, it } from 'vitest'
import { readObject, sha256, testBytes } from '../dev/s3-client.ts'
import type { WebHandler } from '../dev/serve-handler.ts'
import { storeConfig, type TestStore } from '../dev/stores.ts'
import { fetchTransport, type Transport, upload } from '../engine/index.ts'
import type { PresignedPutReply, TokenReply } from '../protocol/wire.ts'
import { createUploadHandler } from '../server/index.ts'
import { uploadApiFixture } from './helpers/upload-api-fixture.ts'

const MiB = 1024 * 1024
const rgw = inject('rgw')
const { s3rver, serve, track, readerFor } = uploadApiFixture()

/** What next-s3-upload's client POSTs (its `N` in dist/index.js): no filesize, no strategy. */
const askAsNextS3Upload = (api: string, file: File, strategy: 'presigned' | 'aws-sdk') =>
  fetch(api, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ filename: file.name, filetype: file.type, _nextS3: { strategy } }),
  })

describe("(a) next-s3-upload's requests against this handler", () => {
  it.each([
    ['s3rver', () => s3rver()],
    ['rgw', () => rgw as TestStore],
  ])(
    'presigned on %s: its shape { key, bucket, region, endpoint, url }, and its PUT lands byte-exact',
    async (_name, store) => {
      // Its client sends only Content-Type and Cache-Control, never the `headers` a reply lists:
      // the canned ACL and the copy guard this upload API signs by default would make storage refuse its PUT.
      const { api } = await serve(createUploadHandler(storeConfig(store(), { objectAcl: false, copyGuard: false })))
      const bytes = testBytes(150_000, 51)
      const file = new File([bytes], 'holiday photo.jpg', { type: 'image/jpeg' })
      const response = await askAsNextS3Upload(api, file, 'presigned')
      expect(response.status).toBe(200)
      const reply = (await response.json()) as PresignedPutReply
      expect(reply).toMatchObject({
        key: expect.stringMatching(/^next-s3-uploads\/[0-9a-f-]{36}\/holiday-photo\.jpg$/),
        bucket: store().bucket,
        region: store().region,
        endpoint: store().endpoint,
        url: expect.stringContaining('X-Amz-Signature='),
      })
      // Only `headers` and `ticket` are added, which next-s3-upload's client ignores.
      expect(Object.keys(reply).sort()).toEqual(['bucket', 'endpoint', 'headers', 'key', 'region', 'ticket', 'url'])
      // Its client's result URL is `${endpoint}/${bucket}/${key}`: the object the URL writes.
      expect(reply.url.split('?')[0]).toBe(`${reply.endpoint}/${reply.bucket}/${reply.key}`)

      // Its client's PUT (`G` in dist/index.js): XHR with these two headers and the file's bytes.
      const put = await fetch(reply.url, {
        method: 'PUT',
        headers: { 'Content-Type': file.type, 'Cache-Control': 'max-age=630720000' },
        body: await file.arrayBuffer(),
      })
      expect(put.status).toBe(200)
      const reader = readerFor(store())
      expect(sha256(await readObject(reader, reply.bucket, reply.key))).toBe(sha256(bytes))
      const head = await reader.send(new HeadObjectCommand({ Bucket: reply.bucket, Key: reply.key }))
      expect([head.ContentType, head.CacheControl]).toEqual(['image/jpeg', 'max-age=630720000'])
    },
  )

  it("token ('aws-sdk') on RGW: { token: { Credentials }, key, bucket, region } + endpoint, and an SDK upload with it lands byte-exact", async () => {
    const sts = { mode: 'assume-role', roleArn: rgw.roleArn, endpoint: rgw.endpoint } as const
    const { api } = await serve(createUploadHandler(storeConfig(rgw, { sts })))
    const bytes = testBytes(90_000, 52)
    const file = new File([bytes], 'report.pdf', { type: 'application/pdf' })
    const response = await askAsNextS3Upload(api, file, 'aws-sdk')
    expect(response.status).toBe(200)
    const reply = (await response.json()) as TokenReply
    expect(reply).toEqual({
      token: {
        Credentials: {
          AccessKeyId: expect.any(String),
          SecretAccessKey: expect.any(String),
          SessionToken: expect.any(String),
          Expiration: expect.any(String),
        },
      },
      key: expect.stringMatching(/\/report\.pdf$/),
      bucket: rgw.bucket,
      region: rgw.region,
      // A custom store: where to send the bytes (next-s3-upload's own route never says).
      endpoint: rgw.endpoint,
      forcePathStyle: true,
      // Updraft's own addition (for /refresh and /duplicates); next-s3-upload's client ignores it.
      ticket: expect.stringMatching(/^tok1\./),
    })

    // Its client's token upload (`q` in dist/index.js): lib-storage's Upload with these
    // credentials; endpoint and path style added, as its client targets AWS only.
    const { Credentials } = reply.token
    const client = new S3Client({
      region: reply.region,
      endpoint: reply.endpoint,
      forcePathStyle: reply.forcePathStyle,
      credentials: {
        accessKeyId: Credentials.AccessKeyId,
        secretAccessKey: Credentials.SecretAccessKey,
        sessionToken: Credentials.SessionToken,
      },
    })
    track(client)
    const params = {
      Bucket: reply.bucket,
      Key: reply.key,
      Body: bytes,
      CacheControl: 'max-age=630720000, public',
      ContentType: file.type,
    }
    await new Upload({ client, params }).done()
    expect(sha256(await readObject(readerFor(rgw), reply.bucket, reply.key))).toBe(sha256(bytes))
  })
})

/**
 * next-s3-upload 0.3.4's route, presigned branch, as its dist/handler-*.mjs does it: its own SDK
 * client (no checksum settings), its key rule, a 3600 s PutObject URL signing ContentType and
 * CacheControl, and a reply with no `headers`. A fake of that project's API route, not of S3.
 */
function nextS3UploadRoute(store: TestStore): WebHandler {
  const { bucket, region, endpoint } = store
  const client = new S3Client({ credentials: store.credentials, region, forcePathStyle: true, endpoint })
  track(client)
  return async (request) => {
    const { filename, filetype, _nextS3 } = (await request.json()) as {
      filename: string
      filetype: string
      _nextS3?: { strategy?: string }
    }
    // Its token branch needs AWS's GetFederationToken; this stand-in only serves presigned.
    if (_nextS3?.strategy !== 'presigned') return new Response(null, { status: 500 })
    const key = `next-s3-uploads/${crypto.randomUUID()}/${filename.replace(/[^0-9a-zA-Z!_\\.\\*'\\(\\)\\\-/]/g, ' ').replace(/\s+/g, '-')}`
    const command = new PutObjectCommand({
      Bucket: bucket,
      Key: key,
      ContentType: filetype,
      CacheControl: 'max-age=630720000',
    })
    const url = await getSignedUrl(client, command, { expiresIn: 60 * 60 })
    return Response.json({ key, bucket, region, endpoint, url })
  }
}

describe("(b) this engine against a route that answers only next-s3-upload's shapes (s3rver)", () => {
  it.each([
    ['100 kB', 100_000],
    ['6 MiB + 1, over one part: still one PUT, as the route signs only one URL', 6 * MiB + 1],
  ])('%s uploads byte-exact with the headers its URL signs', async (_title, size) => {
    const { api, calls } = await serve(nextS3UploadRoute(s3rver()))
    const puts: string[] = []
    // The upload API's own calls go through the transport too; only storage's are counted here.
    const transport: Transport = (request) => {
      if (request.url.startsWith(s3rver().endpoint)) {
        puts.push(`${request.method} ${new URL(request.url).searchParams.has('partNumber') ? 'part' : 'object'}`)
      }
      return fetchTransport(request)
    }
    const bytes = testBytes(size, 53)
    const result = await upload(new File([bytes], 'clip.mp4', { type: 'video/mp4' }), {
      api,
      strategy: 'presigned',
      transport,
    })

    expect(calls).toHaveLength(1)
    expect(calls[0]!.body).toMatchObject({
      filename: 'clip.mp4',
      filetype: 'video/mp4',
      _nextS3: { strategy: 'presigned' },
    })
    expect(Object.keys(calls[0]!.reply as object).sort()).toEqual(['bucket', 'endpoint', 'key', 'region', 'url'])
    expect(puts).toEqual(['PUT object'])
    const reader = readerFor(s3rver())
    expect(sha256(await readObject(reader, result.bucket, result.key))).toBe(sha256(bytes))
    // With no `headers` in the reply the engine sent what next-s3-upload's client sends.
    const head = await reader.send(new HeadObjectCommand({ Bucket: result.bucket, Key: result.key }))
    expect([head.ContentType, head.CacheControl]).toEqual(['video/mp4', 'max-age=630720000'])
  })
})
