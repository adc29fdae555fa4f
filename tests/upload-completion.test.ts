// Issue 12: every upload ends at the upload API. On s3rver and Ceph RGW, in both modes, single PUT
// and multipart: the server verifies the object (size, type, first bytes) before it believes it,
// `onUploadComplete` runs with what storage holds and its answer reaches the page; forged,
// replayed, expired or lying completions are refused and call nothing.
import { HeadObjectCommand, type S3Client } from '@aws-sdk/client-s3'
import { describe, expect, it } from 'vitest'
import { readObject, sha256, testBytesOf } from '../dev/s3-client.ts'
import type { TestStore } from '../dev/stores.ts'
import { ApiError, fetchTransport, NetworkError, type Transport, upload, uploadObject } from '../engine/index.ts'
import type { PresignedMultipartReply, PresignedPutReply, TokenReply } from '../protocol/wire.ts'
import { type CompletedUpload, RequestError, type UploadHandlerConfig } from '../server/index.ts'
import { signTicket, verifyTicket } from '../server/ticket.ts'
import { uploadApiFixture } from './helpers/upload-api-fixture.ts'

const MiB = 1024 * 1024
const TICKET_SECRET = 'completion-test-ticket-secret'
const { stores, uploadApiFor, tokenSts } = uploadApiFixture()

type Strategy = 'presigned' | 'token'
const tokenConfig = (store: TestStore): UploadHandlerConfig => ({ sts: tokenSts(store) })

/** An app that records what its server was told: deduplicated on uploadId, as the README says to. */
function recordingApp() {
  const calls: Array<Omit<CompletedUpload<{ album: string }>, 'request'> & { cookie: string | null }> = []
  const records = new Map<string, number>()
  const config: UploadHandlerConfig<{ album: string }, { recordId: number; album: string }> = {
    ticketSecret: TICKET_SECRET,
    metadata: (sent) => {
      const album = (sent as { album?: unknown } | undefined)?.album
      if (typeof album !== 'string') throw new Error('album must be a string')
      return { album }
    },
    key: (_request, filename, _body, metadata) =>
      `next-s3-uploads/${metadata.album}/${crypto.randomUUID()}/${filename}`,
    onUploadComplete: async ({ request, ...upload }) => {
      calls.push({ ...upload, cookie: request.headers.get('x-visitor') })
      if (!records.has(upload.uploadId)) records.set(upload.uploadId, records.size + 1)
      return { recordId: records.get(upload.uploadId)!, album: upload.metadata.album }
    },
  }
  return { calls, records, config: config as UploadHandlerConfig }
}

/** Bytes that start as a PNG does: enough for the server's file-signature check. */
const pngBytes = (size: number, seed: number) => testBytesOf('image/png', size, seed)
const HTML = new TextEncoder().encode('<!doctype html><script>alert(document.cookie)</script>')

async function post<T = Record<string, unknown>>(api: string, route: string, body: unknown) {
  const response = await fetch(api + route, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-visitor': 'visitor-1' },
    body: JSON.stringify(body),
  })
  return { status: response.status, body: (await response.json()) as T & { error?: string } }
}

const exists = (client: S3Client, bucket: string, key: string) =>
  client.send(new HeadObjectCommand({ Bucket: bucket, Key: key })).then(
    () => true,
    (error: { $metadata?: { httpStatusCode?: number } }) =>
      error.$metadata?.httpStatusCode === 404 ? false : Promise.reject(error),
  )

/** The token reply's credentials, used as a page holding them could: any bytes, any Content-Type. */
const withToken = (reply: TokenReply, bytes: Uint8Array<ArrayBuffer>, contentType: string) =>
  uploadObject(new Blob([bytes]), {
    bucket: reply.bucket,
    key: reply.key,
    region: reply.region,
    endpoint: reply.endpoint,
    forcePathStyle: true,
    contentType,
    credentials: {
      accessKeyId: reply.token.Credentials.AccessKeyId,
      secretAccessKey: reply.token.Credentials.SecretAccessKey,
      sessionToken: reply.token.Credentials.SessionToken,
    },
  })

describe.each(Object.entries(stores))('on %s', (_name, store) => {
  const modeConfig = (strategy: Strategy) => (strategy === 'token' ? tokenConfig(store()) : {})

  describe.each<[Strategy, string, number]>([
    ['presigned', 'single PUT', 200_000],
    ['presigned', 'multipart', 6 * MiB],
    ['token', 'single PUT', 200_000],
    ['token', 'multipart', 6 * MiB],
  ])('%s, %s', (strategy, _shape, size) => {
    it('onUploadComplete runs once, with the verified size and type and the ticket’s metadata; serverData reaches the page', async () => {
      const app = recordingApp()
      const { api, calls, client } = await uploadApiFor(store(), { ...app.config, ...modeConfig(strategy) })
      const bytes = pngBytes(size, 41)
      const result = await upload(new File([bytes], 'photo.png', { type: 'image/png' }), {
        api,
        strategy,
        metadata: { album: 'holiday' },
        apiHeaders: { 'x-visitor': 'visitor-1' },
      })
      expect(sha256(await readObject(client, result.bucket, result.key))).toBe(sha256(bytes))
      expect(result.key).toMatch(/^next-s3-uploads\/holiday\//)
      expect(result.serverData).toEqual({ recordId: 1, album: 'holiday' })
      const head = await client.send(new HeadObjectCommand({ Bucket: result.bucket, Key: result.key }))
      expect(app.calls).toEqual([
        {
          key: result.key,
          bucket: store().bucket,
          size,
          contentType: 'image/png',
          etag: head.ETag,
          metadata: { album: 'holiday' },
          uploadId: expect.any(String),
          cookie: 'visitor-1',
        },
      ])
      // A multipart upload the upload API created (presigned, or token mode's createMultipart):
      // storage's UploadId is the dedupe key; otherwise the ticket's own.
      if (size > 5 * MiB)
        expect(app.calls[0]!.uploadId).toBe((calls[0]!.reply as PresignedMultipartReply | TokenReply).uploadId)
      expect(calls.map((call) => call.route).filter((route) => route === '/complete')).toEqual(['/complete'])
    })
  })

  describe('forged and lying completions are refused, and call nothing', () => {
    async function setup(
      strategy: Strategy,
      declared: { filesize: number; filetype?: string },
      extra: UploadHandlerConfig = {},
    ) {
      const app = recordingApp()
      const served = await uploadApiFor(store(), { ...app.config, ...modeConfig(strategy), ...extra })
      const asked = await post<TokenReply & PresignedPutReply>(served.api, '', {
        filename: 'photo.png',
        filetype: 'image/png',
        strategy,
        metadata: { album: 'mine' },
        ...declared,
      })
      expect(asked.status, asked.body.error).toBe(200)
      return { ...served, app, reply: asked.body }
    }

    it('a ticket altered to name another key, or other metadata: 403', async () => {
      const { api, app, reply } = await setup('presigned', { filesize: HTML.length })
      const [prefix, claims, signature] = reply.ticket!.split('.')
      const decoded = JSON.parse(Buffer.from(claims!, 'base64url').toString())
      for (const change of [{ key: 'next-s3-uploads/someone-else/photo.png' }, { metadata: { album: 'theirs' } }]) {
        const altered = Buffer.from(JSON.stringify({ ...decoded, ...change })).toString('base64url')
        expect(await post(api, '/complete', { ticket: `${prefix}.${altered}.${signature}` })).toEqual({
          status: 403,
          body: { error: 'The upload ticket is not valid' },
        })
      }
      expect(app.calls).toEqual([])
    })

    it('metadata sent to /complete is never read: the ticket’s is what the app gets', async () => {
      const { api, app, reply } = await setup('presigned', { filesize: 1000 })
      expect((await fetch(reply.url, { method: 'PUT', headers: reply.headers, body: pngBytes(1000, 1) })).status).toBe(
        200,
      )
      const done = await post(api, '/complete', { ticket: reply.ticket, metadata: { album: 'theirs' }, key: 'other' })
      expect(done.status).toBe(200)
      expect(app.calls.map((call) => [call.metadata, call.key])).toEqual([[{ album: 'mine' }, reply.key]])
    })

    it('metadata the validator refuses: 400 with its reason, nothing issued', async () => {
      const app = recordingApp()
      const { api, calls } = await uploadApiFor(store(), app.config)
      const refused = await post(api, '', {
        filename: 'a.png',
        filetype: 'image/png',
        filesize: 1,
        strategy: 'presigned',
        metadata: { album: 7 },
      })
      expect(refused).toEqual({ status: 400, body: { error: 'metadata is not valid: album must be a string' } })
      expect(calls.map((call) => call.status)).toEqual([400])
    })

    it.each<Strategy>(['presigned', 'token'])('an upload that never happened (%s): 404', async (strategy) => {
      const { api, app, reply } = await setup(strategy, { filesize: 1000 })
      expect(await post(api, '/complete', { ticket: reply.ticket })).toEqual({
        status: 404,
        body: { error: 'Storage holds no object for this upload: send its bytes before completing it' },
      })
      expect(app.calls).toEqual([])
    })

    it('a size lie through token credentials (declared 10 B, stored 3 MiB): refused, object deleted', async () => {
      const { api, app, reply, client } = await setup('token', { filesize: 10 }, { maxFileSize: MiB })
      await withToken(reply, pngBytes(3 * MiB, 2), 'image/png')
      expect(await exists(client, reply.bucket, reply.key)).toBe(true)
      expect(await post(api, '/complete', { ticket: reply.ticket })).toEqual({
        status: 422,
        body: { error: `The uploaded object was refused and deleted: it holds ${3 * MiB} bytes, not the 10 declared` },
      })
      expect(await exists(client, reply.bucket, reply.key)).toBe(false)
      expect(app.calls).toEqual([])
    })

    it('a type lie through token credentials (declared image/png, stored as text/html): refused, deleted', async () => {
      const { api, app, reply, client } = await setup('token', { filesize: HTML.length })
      await withToken(reply, HTML, 'text/html')
      const refused = await post(api, '/complete', { ticket: reply.ticket })
      expect(refused).toEqual({
        status: 422,
        body: {
          error:
            "The uploaded object was refused and deleted: its Content-Type is 'text/html', not the 'image/png' issued",
        },
      })
      expect(await exists(client, reply.bucket, reply.key)).toBe(false)
      expect(app.calls).toEqual([])
    })

    it.each<Strategy>(['presigned', 'token'])(
      'a type lie in the bytes (%s: image/png declared and sent, the bytes are HTML): refused, deleted',
      async (strategy) => {
        const { api, app, reply, client } = await setup(strategy, { filesize: HTML.length })
        if (strategy === 'token') await withToken(reply, HTML, 'image/png')
        else expect((await fetch(reply.url, { method: 'PUT', headers: reply.headers, body: HTML })).status).toBe(200)
        expect(await post(api, '/complete', { ticket: reply.ticket })).toEqual({
          status: 422,
          body: {
            error:
              'The uploaded object was refused and deleted: its first bytes do not match its declared type, image/png',
          },
        })
        expect(await exists(client, reply.bucket, reply.key)).toBe(false)
        expect(app.calls).toEqual([])
      },
    )

    it('checkFileSignatures: false lets the same bytes through (the type check is the server’s choice)', async () => {
      const { api, app, reply } = await setup('presigned', { filesize: HTML.length }, { checkFileSignatures: false })
      expect((await fetch(reply.url, { method: 'PUT', headers: reply.headers, body: HTML })).status).toBe(200)
      expect((await post(api, '/complete', { ticket: reply.ticket })).status).toBe(200)
      expect(app.calls).toHaveLength(1)
    })

    it('an expired ticket: 403, nothing called, the object left for the sweep', async () => {
      const { api, app, reply, client } = await setup('presigned', { filesize: 1000 })
      expect((await fetch(reply.url, { method: 'PUT', headers: reply.headers, body: pngBytes(1000, 3) })).status).toBe(
        200,
      )
      // The same ticket as it is once its lifetime is over: re-signed with the server's secret, `expires` in the past.
      const claims = verifyTicket(reply.ticket!, TICKET_SECRET, reply.bucket)
      const expired = signTicket({ ...claims, expires: Math.floor(Date.now() / 1000) - 1 }, TICKET_SECRET)
      expect(await post(api, '/complete', { ticket: expired })).toEqual({
        status: 403,
        body: { error: 'The upload ticket has expired: start the upload again' },
      })
      expect(app.calls).toEqual([])
      expect(await exists(client, reply.bucket, reply.key)).toBe(true)
    })

    it('a ticket replayed after its object is gone: 404, the app is not told again', async () => {
      const { api, app, reply, client } = await setup('presigned', { filesize: 1000 })
      expect((await fetch(reply.url, { method: 'PUT', headers: reply.headers, body: pngBytes(1000, 4) })).status).toBe(
        200,
      )
      expect((await post(api, '/complete', { ticket: reply.ticket })).status).toBe(200)
      await client.send(
        new (await import('@aws-sdk/client-s3')).DeleteObjectCommand({ Bucket: reply.bucket, Key: reply.key }),
      )
      expect((await post(api, '/complete', { ticket: reply.ticket })).status).toBe(404)
      expect(app.calls).toHaveLength(1)
    })

    it('a token ticket cannot complete a multipart upload’s parts, nor a single PUT ticket sign parts', async () => {
      const { api, reply } = await setup('presigned', { filesize: 1000 })
      expect((await post(api, '/parts', { ticket: reply.ticket, partNumbers: [1] })).status).toBe(403)
      expect((await post(api, '/abort', { ticket: reply.ticket })).status).toBe(403)
    })
  })

  describe('when onUploadComplete throws', () => {
    it('a RequestError refuses the upload: its status and message reach the page, the object is deleted', async () => {
      const { api, client, calls } = await uploadApiFor(store(), {
        ticketSecret: TICKET_SECRET,
        onUploadComplete: () => {
          throw new RequestError(403, 'Your storage quota is full: delete a file first')
        },
      })
      const error = await upload(new File([pngBytes(1000, 5)], 'a.png', { type: 'image/png' }), {
        api,
        strategy: 'presigned',
      }).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(ApiError)
      expect(error).toMatchObject({ status: 403, message: 'Your storage quota is full: delete a file first' })
      const { key, bucket } = calls[0]!.reply as PresignedPutReply
      expect(await exists(client, bucket, key)).toBe(false)
    })

    it('any other error: the page hears the upload was stored but not recorded (500, retried), the object stays', async () => {
      let tries = 0
      const logged: unknown[] = []
      const { api, client, calls } = await uploadApiFor(store(), {
        logger: { error: (obj) => void logged.push(obj) },
        onUploadComplete: () => {
          tries++
          throw new Error('database connection refused')
        },
      })
      const error = await upload(new File([pngBytes(1000, 6)], 'a.png', { type: 'image/png' }), {
        api,
        strategy: 'presigned',
        retry: { limit: 1, delay: 1 },
      }).catch((e: unknown) => e)
      expect(error).toMatchObject({
        name: 'ApiError',
        status: 500,
        message: 'The file is stored, but the server could not record the upload (onUploadComplete failed): try again',
      })
      expect(tries).toBe(2)
      expect(JSON.stringify(logged)).toContain('database connection refused')
      const { key, bucket } = calls[0]!.reply as PresignedPutReply
      expect(await exists(client, bucket, key)).toBe(true)
    })
  })

  it.each<[Strategy, number]>([
    ['presigned', 1000],
    ['presigned', 6 * MiB],
    ['token', 1000],
    ['token', 6 * MiB],
  ])(
    '/complete retried after a lost reply (%s, %i bytes): the app is told twice with one uploadId, so it records once',
    async (strategy, size) => {
      const app = recordingApp()
      const { api, client } = await uploadApiFor(store(), { ...app.config, ...modeConfig(strategy) })
      let dropped = false
      // The upload API does its work, then the reply is lost on the way back: the engine tries again.
      const transport: Transport = async (request) => {
        const response = await fetchTransport(request)
        if (!dropped && request.url.endsWith('/complete')) {
          dropped = true
          throw new NetworkError('The connection was reset before the reply arrived')
        }
        return response
      }
      const bytes = pngBytes(size, 7)
      const result = await upload(new File([bytes], 'a.png', { type: 'image/png' }), {
        api,
        strategy,
        transport,
        retry: { delay: 1 },
        metadata: { album: 'x' },
      })
      expect(sha256(await readObject(client, result.bucket, result.key))).toBe(sha256(bytes))
      expect(app.calls).toHaveLength(2)
      expect(app.calls[1]!.uploadId).toBe(app.calls[0]!.uploadId)
      expect(app.records.size).toBe(1)
      expect(result.serverData).toEqual({ recordId: 1, album: 'x' })
    },
  )
})
