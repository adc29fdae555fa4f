// The batch routes' own rules (server/batch.ts, server/upload-api.ts), under the Web handler and the
// Fastify plugin: the list's bounds, per-file faults, the bound on files answered at once, and a
// rate limit that counts files. Presigning with the server's key needs the store only for the
// upload API's one settings check (server/storage-check.ts): an s3rver; the flows against s3rver,
// RGW and Swift are in tests/batch-uploads.test.ts.
import Fastify from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type S3rverInstance, startS3rver } from '../../dev/s3rver.ts'
import { MAX_BATCH_FILES } from '../../protocol/limits.ts'
import type { BatchError, PresignedPutReply } from '../../protocol/wire.ts'
import { BATCH_CONCURRENCY } from '../../server/batch.ts'
import { mapWithin } from '../../server/bounded-map.ts'
import { s3Upload } from '../../server/fastify.ts'
import { createUploadHandler, type UploadHandlerConfig } from '../../server/index.ts'

const quiet = { error: () => {}, warn: () => {} }
let store: S3rverInstance
const base: UploadHandlerConfig = { forcePathStyle: true, logger: quiet }
beforeAll(async () => {
  store = await startS3rver()
  Object.assign(base, { ...store.credentials, bucket: store.bucket, region: store.region, endpoint: store.endpoint })
})
afterAll(() => store.stop())
const file = (name: string) => ({ filename: name, filetype: 'image/png', filesize: 100, strategy: 'presigned' })
const files = (count: number) => Array.from({ length: count }, (_, index) => file(`${index}.png`))

async function batch(config: UploadHandlerConfig, body: unknown) {
  const handle = createUploadHandler({ ...base, ...config })
  const response = await handle(
    new Request('http://app.test/api/s3-upload/batch', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }),
  )
  return {
    status: response.status,
    body: (await response.json()) as { files: Array<PresignedPutReply | BatchError>; error?: string },
  }
}

const statuses = (answers: Array<PresignedPutReply | BatchError>) =>
  answers.map((answer) => ('error' in answer ? answer.status : 200))

describe('the list', () => {
  it.each([
    ['no files', {}, 'files must be a non-empty array with one entry per file, got nothing'],
    ['an empty list', { files: [] }, 'files must be a non-empty array with one entry per file, got an array'],
    [
      'one file, not in a list',
      { files: file('a.png') },
      'files must be a non-empty array with one entry per file, got an object',
    ],
    [
      `${MAX_BATCH_FILES + 1} files`,
      { files: files(MAX_BATCH_FILES + 1) },
      `files may hold at most ${MAX_BATCH_FILES} entries per request, got ${MAX_BATCH_FILES + 1}: send the rest in another request`,
    ],
  ])('%s: 400 for the whole request, nothing issued', async (_case, body, error) => {
    expect(await batch({}, body)).toEqual({ status: 400, body: { error } })
  })

  it(`${MAX_BATCH_FILES} files: each its own key and ticket, in the order asked`, async () => {
    const { status, body } = await batch({}, { files: files(MAX_BATCH_FILES) })
    expect(status).toBe(200)
    const replies = body.files as PresignedPutReply[]
    expect(replies.map((reply) => reply.key.split('/').pop())).toEqual(
      files(MAX_BATCH_FILES).map((entry) => entry.filename),
    )
    expect(new Set(replies.map((reply) => reply.ticket)).size).toBe(MAX_BATCH_FILES)
  })
})

describe('each file on its own', () => {
  it('a fault in one file (the key callback throws) is that file’s 500, logged; the others go', async () => {
    const logged: object[] = []
    const { status, body } = await batch(
      {
        logger: { error: (obj) => void logged.push(obj), warn: () => {} },
        key: (_request, filename) => {
          if (filename === '1.png') throw new Error('database down')
          return `next-s3-uploads/${filename}`
        },
      },
      { files: files(3) },
    )
    expect(status).toBe(200)
    expect(body.files[1]).toEqual({ status: 500, error: 'Internal Server Error' })
    expect(statuses(body.files)).toEqual([200, 500, 200])
    expect(JSON.stringify(logged)).toContain('database down')
  })

  it(`at most ${BATCH_CONCURRENCY} files are answered at once`, async () => {
    let inFlight = 0
    let most = 0
    const { body } = await batch(
      {
        key: async (_request, filename) => {
          most = Math.max(most, ++inFlight)
          await new Promise((resolve) => setTimeout(resolve, 1))
          inFlight--
          return `next-s3-uploads/${filename}`
        },
      },
      { files: files(40) },
    )
    expect(statuses(body.files).every((status) => status === 200)).toBe(true)
    expect(most).toBe(BATCH_CONCURRENCY)
  })

  it('mapWithin keeps the order and the bound whatever order the calls end in', async () => {
    let inFlight = 0
    let most = 0
    const results = await mapWithin(3, [50, 10, 30, 0, 20, 5, 0], async (wait, index) => {
      most = Math.max(most, ++inFlight)
      await new Promise((resolve) => setTimeout(resolve, wait))
      inFlight--
      return index
    })
    expect(results).toEqual([0, 1, 2, 3, 4, 5, 6])
    expect(most).toBe(3)
  })
})

describe('the rate limit counts files', () => {
  /** A fixed-window limit of `max` per client, as createRedisThrottle counts, and how often it was asked. */
  function countingThrottle(max: number) {
    let count = 0
    return { throttle: () => (++count > max ? 42 : undefined), calls: () => count }
  }

  it('throttle is called once per file (until it refuses one): a batch of 8 under a limit of 5 issues the first 5, the rest wait', async () => {
    const limit = countingThrottle(5)
    const handle = createUploadHandler({ ...base, throttle: limit.throttle })
    const ask = (route: string, body: unknown) =>
      handle(
        new Request(`http://app.test/api/s3-upload${route}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        }),
      )
    const answered = await ask('/batch', { files: files(8) })
    expect(answered.status).toBe(200)
    const { files: answers } = (await answered.json()) as { files: Array<PresignedPutReply | BatchError> }
    expect(statuses(answers)).toEqual([200, 200, 200, 200, 200, 429, 429, 429])
    expect(answers[5]).toEqual({ status: 429, error: 'Too many requests: try again in 42 s', retryAfter: 42 })
    expect(limit.calls()).toBe(6) // 5 files allowed, the 6th refused: the last two are not counted
    // The limit is spent for one-file requests too: a batch is no way around it.
    const single = await ask('', file('one.png'))
    expect(single.status).toBe(429)
    expect(single.headers.get('retry-after')).toBe('42')
  })

  it('the Fastify plugin’s rateLimit counts a batch’s files on the same counter as every request', async () => {
    const app = Fastify()
    await app.register(s3Upload, { ...base, rateLimit: { max: 5, timeWindow: 60_000 } })
    const inject = (url: string, payload: unknown) =>
      app.inject({
        method: 'POST',
        url,
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify(payload),
      })
    const first = await inject('/api/s3-upload/batch', { files: files(3) })
    expect(statuses(first.json<{ files: Array<PresignedPutReply | BatchError> }>().files)).toEqual([200, 200, 200])
    const second = await inject('/api/s3-upload/batch', { files: files(4) })
    const answers = second.json<{ files: Array<PresignedPutReply | BatchError> }>().files
    expect(statuses(answers)).toEqual([200, 200, 429, 429])
    expect(answers[2]).toMatchObject({ status: 429, retryAfter: expect.any(Number) })
    expect((await inject('/api/s3-upload', file('one.png'))).statusCode).toBe(429)
    await app.close()
  })

  it('with rateLimit: false, every file goes', async () => {
    const app = Fastify()
    await app.register(s3Upload, { ...base, rateLimit: false })
    const reply = await app.inject({
      method: 'POST',
      url: '/api/s3-upload/batch',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ files: files(MAX_BATCH_FILES) }),
    })
    expect(
      statuses(reply.json<{ files: Array<PresignedPutReply | BatchError> }>().files).every((status) => status === 200),
    ).toBe(true)
    await app.close()
  })
})

describe('routes', () => {
  it('/batch and /batch/complete take POST only, and an unknown route names them', async () => {
    const handle = createUploadHandler(base)
    for (const path of ['/batch', '/batch/complete']) {
      const wrong = await handle(new Request(`http://app.test/api/s3-upload${path}`))
      expect(wrong.status, path).toBe(405)
    }
    const unknown = await handle(new Request('http://app.test/api/s3-upload/batches', { method: 'POST' }))
    expect(((await unknown.json()) as { error: string }).error).toContain(
      'POST /api/s3-upload/batch, POST /api/s3-upload/batch/complete',
    )
  })

  it('a batch /complete whose entries are not completions: each refused alone', async () => {
    const handle = createUploadHandler(base)
    const reply = await handle(
      new Request('http://app.test/api/s3-upload/batch/complete', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ files: [{}, { ticket: 'forged.ticket.here' }] }),
      }),
    )
    expect(await reply.json()).toEqual({
      files: [
        { status: 400, error: 'ticket must be the ticket string the upload request returned, got nothing' },
        { status: 403, error: 'The upload ticket is not valid' },
      ],
    })
  })
})
