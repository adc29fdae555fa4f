// Presigned mode against s3rver, Ceph RGW and OpenStack Swift: the handler's URLs, PUT with plain fetch (the
// engine's upload() is wired to them elsewhere), every object read back and compared by sha256.
import { HeadObjectCommand, ListPartsCommand, type S3Client } from '@aws-sdk/client-s3'
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest'
import { readObject, sdkClient, sha256, testBytes } from '../dev/s3-client.ts'
import { type S3rverInstance, startS3rver } from '../dev/s3rver.ts'
import { storeConfig, type TestStore } from '../dev/stores.ts'
import { objectUrl } from '../protocol/object-url.ts'
import type { CompleteReply, PartsReply, PresignedMultipartReply, PresignedPutReply } from '../protocol/wire.ts'
import { createUploadHandler, type UploadHandler } from '../server/index.ts'

const MiB = 1024 * 1024
let s3rver: S3rverInstance
beforeAll(async () => {
  s3rver = await startS3rver()
})
afterAll(() => s3rver?.stop())

const stores: Record<'s3rver' | 'rgw' | 'swift', () => TestStore> = {
  s3rver: () => s3rver,
  rgw: () => inject('rgw'),
  swift: () => inject('swift'),
}

describe.each(Object.entries(stores))('presigned uploads to %s', (name, store) => {
  let handler: UploadHandler
  let client: S3Client
  const logged: Array<Record<string, unknown>> = []
  beforeAll(() => {
    handler = createUploadHandler(
      storeConfig(store(), {
        ticketSecret: 'presigned-test-ticket-secret',
        logger: { error: (obj) => void logged.push(obj as Record<string, unknown>) },
      }),
    )
    client = sdkClient(store())
  })
  afterAll(() => client?.destroy())

  async function call<T>(path: string, body: unknown, using = handler): Promise<{ status: number; body: T }> {
    const response = await using(
      new Request(`http://app.test/api/s3-upload${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }),
    )
    const text = await response.text()
    return { status: response.status, body: (text.startsWith('{') ? JSON.parse(text) : text) as T }
  }

  async function readBack(key: string) {
    return sha256(await readObject(client, store().bucket, key))
  }

  const put = (url: string, bytes: Uint8Array, headers: Record<string, string> = {}) =>
    fetch(url, { method: 'PUT', body: bytes as Uint8Array<ArrayBuffer>, headers })

  async function startMultipart(size: number, filename = 'movie.bin') {
    const started = await call<PresignedMultipartReply>('', {
      filename,
      filetype: 'video/mp2t',
      filesize: size,
      strategy: 'presigned',
    })
    expect(started.status).toBe(200)
    return started.body
  }

  async function uploadParts(reply: PresignedMultipartReply, bytes: Uint8Array) {
    const partNumbers = Array.from({ length: reply.partCount! }, (_, i) => i + 1)
    const { body } = await call<PartsReply>('/parts', { ticket: reply.ticket, partNumbers })
    return Promise.all(
      partNumbers.map(async (partNumber) => {
        const start = (partNumber - 1) * reply.partSize
        const response = await put(body.urls[partNumber]!, bytes.subarray(start, start + reply.partSize))
        expect(response.status).toBe(200)
        return { partNumber, etag: response.headers.get('etag')! }
      }),
    )
  }

  it('single PUT: the signed headers land on the object, bytes exact', async () => {
    const bytes = testBytes(200_000, 11)
    const { status, body } = await call<PresignedPutReply>('', {
      filename: 'notes.txt',
      filetype: 'text/plain',
      filesize: bytes.length,
      strategy: 'presigned',
    })
    expect(status).toBe(200)
    expect(body).toEqual({
      key: expect.stringMatching(/^next-s3-uploads\/[0-9a-f-]{36}\/notes\.txt$/),
      bucket: store().bucket,
      region: store().region,
      endpoint: store().endpoint,
      url: expect.stringContaining('X-Amz-Signature='),
      // The copy guard (server/copy-guard.ts): every test store is one other than AWS.
      headers: {
        'Content-Type': 'text/plain',
        'Cache-Control': 'max-age=630720000',
        'x-amz-acl': 'private',
        'x-amz-copy-source-range': 'bytes=1-0',
      },
      ticket: expect.stringMatching(/^put1\./),
    })
    const signed = new URL(body.url).searchParams
    expect(signed.get('X-Amz-SignedHeaders')).toBe(
      'cache-control;content-length;content-type;host;x-amz-acl;x-amz-copy-source-range',
    )
    expect(signed.get('X-Amz-Expires')).toBe('3600')
    expect(signed.has('x-amz-checksum-crc32')).toBe(false)
    expect(body.url.split('?')[0]).toBe(objectUrl({ ...store(), key: body.key, forcePathStyle: true }))

    expect((await put(body.url, bytes, body.headers)).status).toBe(200)
    expect(await readBack(body.key)).toBe(sha256(bytes))
    const head = await client.send(new HeadObjectCommand({ Bucket: body.bucket, Key: body.key }))
    expect(head.ContentType).toBe('text/plain')
    expect(head.CacheControl).toBe('max-age=630720000')
  })

  it("next-s3-upload's form (no filesize) gets its shape and uploads as its client does, with objectAcl: false and copyGuard: false", async () => {
    const bytes = testBytes(12_345, 12)
    const request = { filename: 'a b.png', filetype: 'image/png', _nextS3: { strategy: 'presigned' } }
    // What next-s3-upload's client sends: Content-Type and Cache-Control, nothing from `headers`.
    const asItsClient = (url: string) =>
      put(url, bytes, { 'Content-Type': 'image/png', 'Cache-Control': 'max-age=630720000' })

    // By default the URL also signs x-amz-acl and the copy guard, which that client does not send: storage refuses it.
    const pinned = await call<PresignedPutReply>('', request)
    expect((await asItsClient(pinned.body.url)).status).toBe(403)
    const withAcl = await call<PresignedPutReply>(
      '',
      request,
      createUploadHandler(storeConfig(store(), { objectAcl: false })),
    )
    expect((await asItsClient(withAcl.body.url)).status).toBe(403)

    const withoutAcl = createUploadHandler(storeConfig(store(), { objectAcl: false, copyGuard: false }))
    const { body } = await call<PresignedPutReply>('', request, withoutAcl)
    expect(Object.keys(body).sort()).toEqual(['bucket', 'endpoint', 'headers', 'key', 'region', 'ticket', 'url'])
    expect(new URL(body.url).searchParams.get('X-Amz-SignedHeaders')).toBe('cache-control;content-type;host')
    expect((await asItsClient(body.url)).status).toBe(200)
    expect(await readBack(body.key)).toBe(sha256(bytes))
  })

  it('an empty file is one PUT of 0 bytes, typed application/octet-stream (never unsigned)', async () => {
    const { body } = await call<PresignedPutReply>('', {
      filename: 'empty',
      filetype: '',
      filesize: 0,
      strategy: 'presigned',
    })
    expect(body.headers).toEqual({
      'Cache-Control': 'max-age=630720000',
      'Content-Type': 'application/octet-stream',
      'x-amz-acl': 'private',
      'x-amz-copy-source-range': 'bytes=1-0',
    })
    expect((await put(body.url, new Uint8Array(), body.headers)).status).toBe(200)
    expect(await readBack(body.key)).toBe(sha256(new Uint8Array()))
  })

  it('a PUT of more bytes than declared is refused by storage', async () => {
    const { body } = await call<PresignedPutReply>('', {
      filename: 'x.bin',
      filetype: 'application/octet-stream',
      filesize: 100,
      strategy: 'presigned',
    })
    const response = await put(body.url, testBytes(101), body.headers)
    expect(response.status).toBe(403)
  })

  it('exactly 5 MiB is still one PUT; one byte more goes multipart', async () => {
    const single = await call<PresignedPutReply>('', {
      filename: 'f',
      filetype: '',
      filesize: 5 * MiB,
      strategy: 'presigned',
    })
    expect(single.body.url).toBeDefined()
    const multi = await startMultipart(5 * MiB + 1)
    expect(multi).toMatchObject({ partSize: 5 * MiB, partCount: 2 })
    await call('/abort', { ticket: multi.ticket })
  })

  it('multipart: create, /parts, PUTs, /complete; bytes exact, headers on the object', async () => {
    const bytes = testBytes(11 * MiB + 3, 13)
    const reply = await startMultipart(bytes.length)
    expect(reply).toEqual({
      key: expect.stringMatching(/\/movie\.bin$/),
      bucket: store().bucket,
      region: store().region,
      endpoint: store().endpoint,
      uploadId: expect.any(String),
      partSize: 5 * MiB,
      partCount: 3,
      ticket: expect.stringMatching(/^v1\./),
      // The first parts' URLs (all 3 here), so the first PUTs need no /parts call.
      urls: {
        1: expect.stringContaining('partNumber=1'),
        2: expect.stringContaining('partNumber=2'),
        3: expect.stringContaining('partNumber=3'),
      },
    })
    const parts = await uploadParts(reply, bytes)
    const completed = await call<CompleteReply>('/complete', { ticket: reply.ticket, parts: parts.reverse() })
    expect(completed.status).toBe(200)
    expect(completed.body).toEqual({
      url: objectUrl({ ...store(), key: reply.key, forcePathStyle: true }),
      bucket: reply.bucket,
      key: reply.key,
      // RGW's Complete has an empty ETag; the handler reads it with HEAD instead.
      etag: expect.stringMatching(/^"?[^"]+"?$/),
    })
    expect(await readBack(reply.key)).toBe(sha256(bytes))
    const head = await client.send(new HeadObjectCommand({ Bucket: reply.bucket, Key: reply.key }))
    expect(head.ContentType).toBe('video/mp2t')
    expect(head.CacheControl).toBe('max-age=630720000')
  })

  it('each part URL binds its exact length: a longer body is refused by storage', async () => {
    const reply = await startMultipart(6 * MiB)
    const { body } = await call<PartsReply>('/parts', { ticket: reply.ticket, partNumbers: [2, 1] })
    expect(Object.keys(body.urls).sort()).toEqual(['1', '2'])
    expect(new URL(body.urls['2']!).searchParams.get('X-Amz-SignedHeaders')).toBe('content-length;host')
    // Part 2 is the last: 1 MiB. Storage checks the signed content-length (s3rver as RGW: 403).
    const tooLong = await put(body.urls['2']!, testBytes(1 * MiB + 1))
    expect(tooLong.status).toBe(403)
    const exact = await put(body.urls['2']!, testBytes(1 * MiB))
    expect(exact.status).toBe(200)
    await call('/abort', { ticket: reply.ticket })
  })

  it('part numbers outside 1..partCount → 400', async () => {
    const reply = await startMultipart(6 * MiB)
    for (const partNumbers of [[0], [3], [1, -1]]) {
      const response = await call<{ error: string }>('/parts', { ticket: reply.ticket, partNumbers })
      expect(response.status).toBe(400)
      expect(response.body.error).toMatch(/^part number -?\d is outside 1\.\.2$/)
    }
    await call('/abort', { ticket: reply.ticket })
  })

  it('a tampered or expired ticket → 403', async () => {
    const reply = await startMultipart(6 * MiB)
    const [version, claims, signature] = reply.ticket.split('.') as [string, string, string]
    const widened = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(claims, 'base64url').toString()), filesize: 60 * MiB, partCount: 12 }),
    ).toString('base64url')
    const flipped = signature.slice(0, -2) + (signature.at(-2) === 'A' ? 'B' : 'A') + signature.at(-1)
    for (const ticket of [
      `${version}.${widened}.${signature}`,
      `${version}.${claims}.${flipped}`,
      `${version}.${claims}`,
    ]) {
      const response = await call<{ error: string }>('/parts', { ticket, partNumbers: [1] })
      expect(response).toEqual({ status: 403, body: { error: 'The upload ticket is not valid' } })
    }
    vi.useFakeTimers({ toFake: ['Date'] })
    try {
      vi.setSystemTime(Date.now() + 24 * 60 * 60 * 1000 + 1000)
      for (const path of ['/parts', '/complete', '/abort']) {
        const response = await call<{ error: string }>(path, {
          ticket: reply.ticket,
          partNumbers: [1],
          parts: [{ partNumber: 1, etag: 'e' }],
        })
        expect(response).toEqual({
          status: 403,
          body: { error: 'The upload ticket has expired: start the upload again' },
        })
      }
    } finally {
      vi.useRealTimers()
    }
    await call('/abort', { ticket: reply.ticket })
  })

  it('complete with parts that do not match the plan → 400, and the upload can still complete', async () => {
    const bytes = testBytes(6 * MiB, 14)
    const reply = await startMultipart(bytes.length)
    const parts = await uploadParts(reply, bytes)
    const wrong = [
      [parts[0]],
      [parts[0], parts[0]],
      [...parts, { partNumber: 3, etag: '"x"' }],
      [parts[0], { ...parts[1]!, partNumber: 3 }],
    ]
    for (const attempt of wrong) {
      const response = await call<{ error: string }>('/complete', { ticket: reply.ticket, parts: attempt })
      expect(response.status).toBe(400)
    }
    const completed = await call<CompleteReply>('/complete', { ticket: reply.ticket, parts })
    expect(completed.status).toBe(200)
    expect(await readBack(reply.key)).toBe(sha256(bytes))
  })

  if (name !== 's3rver') {
    it("a wrong ETag in /complete is the client's mistake: 400 InvalidPart", async () => {
      const bytes = testBytes(6 * MiB, 15)
      const reply = await startMultipart(bytes.length)
      const parts = await uploadParts(reply, bytes)
      const response = await call<{ error: string }>('/complete', {
        ticket: reply.ticket,
        parts: [parts[0], { partNumber: 2, etag: '"00000000000000000000000000000000"' }],
      })
      expect(response).toEqual({ status: 400, body: { error: 'Storage refused to complete the upload: InvalidPart' } })
      await call('/abort', { ticket: reply.ticket })
    })

    it('/abort removes the upload and its parts; a second /abort still answers aborted', async () => {
      const reply = await startMultipart(6 * MiB)
      const { body } = await call<PartsReply>('/parts', { ticket: reply.ticket, partNumbers: [1] })
      expect((await put(body.urls['1']!, testBytes(5 * MiB))).status).toBe(200)
      expect(await call('/abort', { ticket: reply.ticket })).toEqual({ status: 200, body: { aborted: true } })
      // RGW says NoSuchKey where AWS says NoSuchUpload.
      await expect(
        client.send(new ListPartsCommand({ Bucket: reply.bucket, Key: reply.key, UploadId: reply.uploadId })),
      ).rejects.toMatchObject({
        name: expect.stringMatching(/^NoSuch(Upload|Key)$/),
      })
      expect(await call('/abort', { ticket: reply.ticket })).toEqual({ status: 200, body: { aborted: true } })
    })
  } else {
    it('/abort on s3rver, which has no AbortMultipartUpload: 500, the reason only in the log', async () => {
      const reply = await startMultipart(6 * MiB)
      logged.length = 0
      const response = await call('/abort', { ticket: reply.ticket })
      expect(response).toEqual({ status: 500, body: 'Internal Server Error' })
      expect(logged[0]).toMatchObject({ route: 'abort', err: { status: expect.any(Number) } })
    })
  }
})
