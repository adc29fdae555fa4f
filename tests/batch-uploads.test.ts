// The batch form of the wire protocol end to end (`POST {path}/batch`, `POST {path}/batch/complete`)
// on s3rver, Ceph RGW and Swift, presigned and (where the store has an STS) token mode: each file
// of a batch gets its own key, ticket and limits, is refused alone (type, size, per-file
// authorization, token mode the server cannot issue), is verified alone (a lie is deleted while the
// others are recorded), and `onUploadComplete` runs once per file. Storage is reached through a
// counting proxy: /complete reads each object with one request. Every stored object is read back.
import type { S3Client } from '@aws-sdk/client-s3'
import Fastify from 'fastify'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { startCountingProxy } from '../dev/counting-proxy.ts'
import { objectExists, readObject, sdkClient, sha256, testBytesOf } from '../dev/s3-client.ts'
import { storeConfig, type TestStore } from '../dev/stores.ts'
import { uploadObject } from '../engine/index.ts'
import type {
  BatchError,
  PresignedMultipartReply,
  PresignedPutReply,
  TokenReply,
  UploadResult,
} from '../protocol/wire.ts'
import { s3Upload } from '../server/fastify.ts'
import { type CompletedUpload, RequestError, type UploadHandlerConfig } from '../server/index.ts'
import { uploadApiFixture } from './helpers/upload-api-fixture.ts'

const MiB = 1024 * 1024
const { stores, uploadApiFor, tokenSts, track } = uploadApiFixture()
const allStores: Record<string, () => TestStore> = { ...stores, swift: () => inject('swift') }

type Reply = TokenReply | PresignedPutReply | PresignedMultipartReply
type FileAnswer = Reply | BatchError
const isError = (answer: unknown): answer is BatchError => typeof (answer as BatchError).error === 'string'
const HTML = new TextEncoder().encode('<!doctype html><script>alert(document.cookie)</script>')

async function post<T>(
  api: string,
  route: string,
  body: unknown,
): Promise<{ status: number; body: T & { error?: string } }> {
  const response = await fetch(api + route, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  return { status: response.status, body: (await response.json()) as T & { error?: string } }
}

/** An app that records what it is told; `refuseAlbum` is an album this visitor may not upload to (its own per-file authorization). */
function recordingApp() {
  const calls: Array<Omit<CompletedUpload<{ album: string }>, 'request'>> = []
  const config: UploadHandlerConfig<{ album: string }, { album: string }> = {
    metadata: (sent) => {
      const album = (sent as { album?: unknown } | undefined)?.album
      if (typeof album !== 'string') throw new RequestError(400, 'album is required')
      if (album === 'not-yours') throw new RequestError(403, 'You may not upload to this album')
      return { album }
    },
    onUploadComplete: ({ request: _request, ...upload }) => {
      calls.push(upload)
      return { album: upload.metadata.album }
    },
  }
  return { calls, config: config as UploadHandlerConfig }
}

/** What a page does with one file's reply: its bytes to storage, as the reply says (token credentials, a presigned PUT or part URLs). */
async function send(
  reply: Reply,
  bytes: Uint8Array<ArrayBuffer>,
  type: string,
  headers: Record<string, string> = {},
): Promise<{ ticket: string; parts?: Array<{ partNumber: number; etag: string }> }> {
  if ('token' in reply) {
    const credentials = reply.token.Credentials
    await uploadObject(new Blob([bytes]), {
      bucket: reply.bucket,
      key: reply.key,
      region: reply.region,
      endpoint: reply.endpoint,
      forcePathStyle: true,
      contentType: type,
      credentials: {
        accessKeyId: credentials.AccessKeyId,
        secretAccessKey: credentials.SecretAccessKey,
        sessionToken: credentials.SessionToken,
      },
    })
    return { ticket: reply.ticket! }
  }
  if ('uploadId' in reply) {
    const parts = []
    for (let partNumber = 1; partNumber <= reply.partCount!; partNumber++) {
      const body = bytes.subarray((partNumber - 1) * reply.partSize, partNumber * reply.partSize)
      const put = await fetch(reply.urls![String(partNumber)]!, { method: 'PUT', body })
      expect(put.status).toBe(200)
      parts.push({ partNumber, etag: put.headers.get('etag')! })
    }
    return { ticket: reply.ticket, parts }
  }
  const put = await fetch(reply.url, { method: 'PUT', headers: { ...reply.headers, ...headers }, body: bytes })
  expect(put.status, await put.clone().text()).toBe(200)
  return { ticket: reply.ticket! }
}

describe.each(Object.entries(allStores))('on %s', (name, store) => {
  let proxy: Awaited<ReturnType<typeof startCountingProxy>>
  let reader: S3Client
  beforeAll(async () => {
    // The upload API reaches storage through the proxy (and so do the URLs it signs): every storage request is seen.
    proxy = await startCountingProxy(store().endpoint)
    reader = track(sdkClient(store()))
  })
  afterAll(() => proxy?.stop())

  const behindProxy = (): TestStore => ({ ...store(), endpoint: proxy.endpoint })
  const strategies = name === 'swift' ? (['presigned'] as const) : (['presigned', 'token'] as const)
  const modeConfig = (strategy: 'presigned' | 'token'): UploadHandlerConfig =>
    strategy === 'token' ? { sts: tokenSts(store()) } : {}

  /** The storage requests the upload API made while `during` ran, as `METHOD status`. */
  async function storageRequests<T>(during: () => Promise<T>): Promise<{ result: T; requests: string[] }> {
    const before = proxy.log.length
    const result = await during()
    return { result, requests: proxy.log.slice(before).map((entry) => `${entry.method} ${entry.status}`) }
  }

  describe.each(strategies)('%s', (strategy) => {
    it('N files in one request, each with its own key and ticket; one /batch/complete verifies each with one storage read and tells the app once per file', async () => {
      const app = recordingApp()
      const { api, calls } = await uploadApiFor(behindProxy(), { ...app.config, ...modeConfig(strategy) })
      const files = [
        { filename: 'a.png', filetype: 'image/png', bytes: testBytesOf('image/png', 1000, 1) },
        { filename: 'b.pdf', filetype: 'application/pdf', bytes: testBytesOf('application/pdf', 20_000, 2) },
        { filename: 'c.txt', filetype: 'text/plain', bytes: testBytesOf('text/plain', 300, 3) },
        { filename: 'd.png', filetype: 'image/png', bytes: testBytesOf('image/png', 6 * MiB, 4) },
        { filename: 'empty', filetype: 'application/octet-stream', bytes: new Uint8Array(0) },
      ]
      const asked = await post<{ files: FileAnswer[] }>(api, '/batch', {
        files: files.map(({ filename, filetype, bytes }) => ({
          filename,
          filetype,
          filesize: bytes.length,
          strategy,
          metadata: { album: 'trip' },
        })),
      })
      expect(asked.status, asked.body.error).toBe(200)
      expect(calls).toHaveLength(1) // one API request for five files
      const replies = asked.body.files as Reply[]
      expect(replies.filter(isError)).toEqual([])
      expect(new Set(replies.map((reply) => reply.key)).size).toBe(files.length)
      expect(new Set(replies.map((reply) => reply.ticket)).size).toBe(files.length)
      if (strategy === 'presigned')
        expect(replies.map((reply) => 'uploadId' in reply)).toEqual([false, false, false, true, false])
      else
        expect(new Set(replies.map((reply) => (reply as TokenReply).token.Credentials.AccessKeyId)).size).toBe(
          name === 'rgw' ? files.length : 1,
        ) // s3rver's STS stand-in hands out one key

      const completions: Array<Awaited<ReturnType<typeof send>>> = []
      for (const [index, reply] of replies.entries())
        completions.push(await send(reply, files[index]!.bytes, files[index]!.filetype))
      const { result: done, requests } = await storageRequests(() =>
        post<{ files: Array<UploadResult | BatchError> }>(api, '/batch/complete', { files: completions }),
      )
      expect(done.status, done.body.error).toBe(200)
      expect(done.body.files.filter(isError)).toEqual([])
      expect((done.body.files as UploadResult[]).map((result) => [result.key, result.serverData])).toEqual(
        replies.map((reply) => [reply.key, { album: 'trip' }]),
      )
      // One read per verified file (a ranged GET where the type has a signature: PNG, PDF; else a
      // HEAD); presigned multipart adds the Complete the server sends for the page.
      const reads = requests.filter((request) => /^(GET|HEAD) /.test(request))
      expect(reads).toHaveLength(files.length)
      expect(requests.filter((request) => request.startsWith('POST'))).toHaveLength(strategy === 'presigned' ? 1 : 0)
      expect(requests.filter((request) => !/^(GET|HEAD|POST) /.test(request))).toEqual([])

      expect(app.calls.map((call) => call.key).sort()).toEqual(replies.map((reply) => reply.key).sort())
      for (const [index, reply] of replies.entries()) {
        expect(sha256(await readObject(reader, reply.bucket, reply.key))).toBe(sha256(files[index]!.bytes))
        expect(app.calls.find((call) => call.key === reply.key)).toMatchObject({
          size: files[index]!.bytes.length,
          contentType: files[index]!.filetype,
          metadata: { album: 'trip' },
        })
      }
    })
  })

  it('one file refused — too large, a type not allowed, an album not the visitor’s, token mode this server cannot issue, a malformed entry — while the others go', async () => {
    const app = recordingApp()
    const { api } = await uploadApiFor(behindProxy(), {
      ...app.config,
      maxFileSize: MiB,
      allowedTypes: ['image/*', 'application/pdf'],
    })
    const ok = (filename: string) => ({
      filename,
      filetype: 'image/png',
      filesize: 500,
      strategy: 'presigned',
      metadata: { album: 'trip' },
    })
    const asked = await post<{ files: FileAnswer[] }>(api, '/batch', {
      files: [
        ok('first.png'),
        { ...ok('huge.png'), filesize: 2 * MiB },
        { ...ok('page.html'), filetype: 'text/html' },
        { ...ok('theirs.png'), metadata: { album: 'not-yours' } },
        { ...ok('token.png'), strategy: 'token' },
        'not an object',
        ok('last.png'),
      ],
    })
    expect(asked.status).toBe(200)
    const [first, huge, html, theirs, token, malformed, last] = asked.body.files
    expect(huge).toEqual({
      status: 413,
      error: `2 MiB is over the 1 MiB limit (filesize ${2 * MiB}, maxFileSize ${MiB} bytes)`,
    })
    expect(html).toMatchObject({
      status: 415,
      error: expect.stringMatching(/^The type 'text\/html' is not accepted here/),
    })
    expect(theirs).toEqual({ status: 403, error: 'You may not upload to this album' })
    expect(token).toMatchObject({ status: 400, code: 'TokenModeUnavailable' })
    expect(malformed).toEqual({ status: 400, error: 'Request body must be a JSON object, got "not an object"' })
    const granted = [first, last] as PresignedPutReply[]
    const bytes = [testBytesOf('image/png', 500, 7), testBytesOf('image/png', 500, 8)]
    const completions = [
      await send(granted[0]!, bytes[0]!, 'image/png'),
      await send(granted[1]!, bytes[1]!, 'image/png'),
    ]
    const done = await post<{ files: UploadResult[] }>(api, '/batch/complete', { files: completions })
    expect(done.body.files.map((result) => result.key)).toEqual(granted.map((reply) => reply.key))
    expect(app.calls).toHaveLength(2)
    for (const [index, reply] of granted.entries())
      expect(sha256(await readObject(reader, reply.bucket, reply.key))).toBe(sha256(bytes[index]!))
  })

  it('a lie in one file of a batch /complete (first bytes not of its type; with token credentials, the size) is refused and deleted while the others are recorded', async () => {
    const strategy = name === 'swift' ? 'presigned' : 'token'
    const app = recordingApp()
    const { api } = await uploadApiFor(behindProxy(), { ...app.config, ...modeConfig(strategy) })
    const honest = [testBytesOf('image/png', 2000, 11), testBytesOf('image/png', 3000, 12)]
    const asked = await post<{ files: Reply[] }>(api, '/batch', {
      files: [2000, HTML.length, 3000, 10].map((filesize, index) => ({
        filename: `${index}.png`,
        filetype: 'image/png',
        filesize,
        strategy,
        metadata: { album: 'trip' },
      })),
    })
    const [a, html, b, sized] = asked.body.files
    const completions = [
      await send(a!, honest[0]!, 'image/png'),
      await send(html!, HTML, 'image/png'),
      await send(b!, honest[1]!, 'image/png'),
      // Presigned URLs bind the size (storage refuses another), token credentials cannot: sent 3000 bytes for 10 declared.
      ...(strategy === 'token' ? [await send(sized!, testBytesOf('image/png', 3000, 13), 'image/png')] : []),
    ]
    const done = await post<{ files: Array<UploadResult | BatchError> }>(api, '/batch/complete', { files: completions })
    expect(done.status).toBe(200)
    expect(done.body.files[1]).toEqual({
      status: 422,
      error: 'The uploaded object was refused and deleted: its first bytes do not match its declared type, image/png',
    })
    if (strategy === 'token')
      expect(done.body.files[3]).toEqual({
        status: 422,
        error: 'The uploaded object was refused and deleted: it holds 3000 bytes, not the 10 declared',
      })
    expect(await objectExists(reader, html!.bucket, html!.key)).toBe(false)
    expect(await objectExists(reader, sized!.bucket, sized!.key)).toBe(false)
    expect(app.calls.map((call) => call.key)).toEqual(expect.arrayContaining([a!.key, b!.key]))
    expect(app.calls).toHaveLength(2)
    expect((done.body.files[0] as UploadResult).serverData).toEqual({ album: 'trip' })
    expect(sha256(await readObject(reader, a!.bucket, a!.key))).toBe(sha256(honest[0]!))
    expect(sha256(await readObject(reader, b!.bucket, b!.key))).toBe(sha256(honest[1]!))
  })

  it('the one-file /complete also reads its object with one storage request', async () => {
    const { api } = await uploadApiFor(behindProxy())
    const bytes = testBytesOf('image/png', 4000, 21)
    const asked = await post<PresignedPutReply>(api, '', {
      filename: 'one.png',
      filetype: 'image/png',
      filesize: bytes.length,
      strategy: 'presigned',
    })
    const { ticket } = await send(asked.body, bytes, 'image/png')
    const { result: done, requests } = await storageRequests(() => post<UploadResult>(api, '/complete', { ticket }))
    expect(done.status, done.body.error).toBe(200)
    expect(requests).toEqual(['GET 206'])
    expect(sha256(await readObject(reader, asked.body.bucket, asked.body.key))).toBe(sha256(bytes))
  })

  it('under the Fastify plugin, the same: a lie refused and deleted in its entry, the others recorded once each', async () => {
    const app = recordingApp()
    const fastify = Fastify()
    await fastify.register(
      s3Upload,
      storeConfig(store(), { ...app.config, logger: { error: () => {}, warn: () => {} } }),
    )
    const inject = async <T>(url: string, payload: unknown) => {
      const reply = await fastify.inject({
        method: 'POST',
        url,
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify(payload),
      })
      return { status: reply.statusCode, body: reply.json<T>() }
    }
    try {
      const bytes = [testBytesOf('image/png', 700, 31), HTML, testBytesOf('application/pdf', 900, 32)]
      const types = ['image/png', 'image/png', 'application/pdf']
      const asked = await inject<{ files: PresignedPutReply[] }>('/api/s3-upload/batch', {
        files: bytes.map((body, index) => ({
          filename: `${index}`,
          filetype: types[index],
          filesize: body.length,
          strategy: 'presigned',
          metadata: { album: 'trip' },
        })),
      })
      expect(asked.status).toBe(200)
      const completions = []
      for (const [index, reply] of asked.body.files.entries())
        completions.push(await send(reply, bytes[index]!, types[index]!))
      const done = await inject<{ files: Array<UploadResult | BatchError> }>('/api/s3-upload/batch/complete', {
        files: completions,
      })
      expect(done.status).toBe(200)
      expect(done.body.files.map((entry) => (isError(entry) ? entry.status : 200))).toEqual([200, 422, 200])
      const [a, html, pdf] = asked.body.files
      expect(app.calls.map((call) => call.key).sort()).toEqual([a!.key, pdf!.key].sort())
      expect(await objectExists(reader, html!.bucket, html!.key)).toBe(false)
      expect(sha256(await readObject(reader, a!.bucket, a!.key))).toBe(sha256(bytes[0]!))
      expect(sha256(await readObject(reader, pdf!.bucket, pdf!.key))).toBe(sha256(bytes[2]!))
    } finally {
      await fastify.close()
    }
  })
})
