// Issue 13, resume step by step (presigned mode, a step-through transport): which requests a
// recorded upload makes, in order; a part storage lists with the wrong size is sent again; a
// store that fails means no resume, never a failed upload.
import { describe, expect, it } from 'vitest'
import { type ResumeRecord, type ResumeStore, resumeUploads } from '../../engine/index.ts'
import { uploadPresigned } from '../../engine/presigned.ts'
import { fileFingerprint, memoryResumeStore } from '../../engine/resume/resume-store.ts'
import { MIN_PART_SIZE } from '../../protocol/limits.ts'
import { type PendingRequest, stepThroughTransport } from '../helpers/fake-transport.ts'

const API_URL = 'https://app.test/api/s3-upload'
const SIZE = 2 * MIN_PART_SIZE + 100
const file = new File([new Uint8Array(SIZE)], 'r.bin', { lastModified: 1 })
const next = async (fake: ReturnType<typeof stepThroughTransport>) => (await fake.waitForPending())[0]!
const answerPart = (part: PendingRequest) => part.respond(200, { ETag: `"${part.step}"` })
const json = (request: PendingRequest, body: unknown) => request.respond(200, {}, JSON.stringify(body))
const completed = { url: 'https://s3.test/b/k', bucket: 'b', key: 'k', etag: '"e"' }

/** Plays storage and the upload API's /parts and /complete until the upload completes. */
async function answerUntilComplete(
  fake: ReturnType<typeof stepThroughTransport>,
  afterEachPart: () => Promise<void> = async () => {},
) {
  for (;;) {
    const request = await next(fake)
    if (request.step === 'POST /complete') return json(request, completed)
    if (request.step === 'POST /parts') {
      const { partNumbers } = JSON.parse(String(request.body)) as { partNumbers: number[] }
      json(request, { urls: Object.fromEntries(partNumbers.map((n) => [n, `https://s3.test/b/k?partNumber=${n}`])) })
    } else {
      answerPart(request)
      await afterEachPart()
    }
  }
}

async function recorded(): Promise<ResumeRecord> {
  return {
    fingerprint: await fileFingerprint(file, API_URL),
    strategy: 'presigned',
    api: API_URL,
    bucket: 'b',
    key: 'k',
    region: 'us-east-1',
    uploadId: 'u',
    partSize: MIN_PART_SIZE,
    partCount: 3,
    ticket: 't',
    contentType: '',
    parts: [{ partNumber: 1, etag: '"one"' }],
    name: 'r.bin',
    size: SIZE,
    lastModified: 1,
    createdAt: Date.now(),
    expiresAt: Date.now() + 60_000,
  }
}

describe('resume, step by step', () => {
  it('asks /list-parts for the ticket, sends only the parts storage lacks (or holds at another size), completes, drops the record', async () => {
    const store = memoryResumeStore()
    await store.put(await recorded())
    const fake = stepThroughTransport()
    const result = uploadPresigned(file, {
      api: API_URL,
      transport: fake.transport,
      resume: resumeUploads({ store }),
      partConcurrency: 1,
    })
    const listing = await next(fake)
    expect(listing.step).toBe('POST /list-parts')
    expect(JSON.parse(String(listing.body))).toEqual({ ticket: 't' })
    // Part 1 is whole; part 2 arrived cut short (another size): it goes again.
    json(listing, {
      parts: [
        { partNumber: 1, etag: '"one"', size: MIN_PART_SIZE },
        { partNumber: 2, etag: '"two"', size: 10 },
      ],
    })
    const parts = await next(fake)
    expect(parts.step).toBe('POST /parts')
    json(parts, { urls: { 2: 'https://s3.test/b/k?partNumber=2', 3: 'https://s3.test/b/k?partNumber=3' } })
    answerPart(await next(fake))
    answerPart(await next(fake))
    const complete = await next(fake)
    expect(JSON.parse(String(complete.body)).parts).toEqual([
      { partNumber: 1, etag: '"one"' },
      { partNumber: 2, etag: '"PUT ?partNumber=2"' },
      { partNumber: 3, etag: '"PUT ?partNumber=3"' },
    ])
    json(complete, completed)
    await expect(result).resolves.toEqual(completed)
    expect(fake.log).toEqual([
      'POST /list-parts',
      'POST /parts',
      'PUT ?partNumber=2',
      'PUT ?partNumber=3',
      'POST /complete',
    ])
    expect(await store.list()).toEqual([])
  })

  it('an upload gone from storage (404) starts afresh with a new upload request, and the stale record goes', async () => {
    const store = memoryResumeStore()
    await store.put(await recorded())
    const fake = stepThroughTransport()
    const result = uploadPresigned(file, {
      api: API_URL,
      transport: fake.transport,
      resume: resumeUploads({ store }),
      partConcurrency: 1,
    })
    ;(await next(fake)).respond(404, {}, JSON.stringify({ error: 'The upload is gone from storage' }))
    const fresh = await next(fake)
    expect(fresh.step).toBe('POST /')
    json(fresh, {
      key: 'k2',
      bucket: 'b',
      region: 'us-east-1',
      uploadId: 'u2',
      partSize: MIN_PART_SIZE,
      partCount: 3,
      ticket: 't2',
    })
    // The new upload is on record as it goes.
    let checked = false
    await answerUntilComplete(fake, async () => {
      if (checked) return
      checked = true
      await expect
        .poll(async () => (await store.list())[0])
        .toMatchObject({ uploadId: 'u2', ticket: 't2', parts: [{ partNumber: 1 }] })
    })
    await result
    expect(await store.list()).toEqual([])
  })

  it('a store that fails means no resume, never a failed upload', async () => {
    const broken = () => Promise.reject(new Error('IndexedDB is not available'))
    const store: ResumeStore = { get: broken, put: broken, delete: broken, list: broken }
    const fake = stepThroughTransport()
    const result = uploadPresigned(file, {
      api: API_URL,
      transport: fake.transport,
      resume: resumeUploads({ store }),
      partConcurrency: 1,
    })
    json(await next(fake), {
      key: 'k',
      bucket: 'b',
      region: 'us-east-1',
      uploadId: 'u',
      partSize: MIN_PART_SIZE,
      partCount: 3,
      ticket: 't',
    })
    await answerUntilComplete(fake)
    await expect(result).resolves.toEqual(completed)
  })

  it('a stream given a fingerprint is recorded with its length unknown; a file of its bytes under that fingerprint carries it on, each part URL asked with its length (the ticket has no plan)', async () => {
    const store = memoryResumeStore()
    const resume = resumeUploads({ store })
    const bytes = new Uint8Array(SIZE).map((_, i) => i % 251)
    const fake = stepThroughTransport()
    const controller = new AbortController()
    const streamed = uploadPresigned(new Blob([bytes]).stream(), {
      api: API_URL,
      transport: fake.transport,
      resume,
      fingerprint: 'recording-1',
      filename: 'r.webm',
      contentType: 'video/webm',
      partConcurrency: 1,
      leavePartsOnError: true,
      signal: controller.signal,
    })
    const asked = await next(fake)
    expect(JSON.parse(String(asked.body))).toMatchObject({ sizeUnknown: true })
    json(asked, { key: 'k', bucket: 'b', region: 'us-east-1', uploadId: 'u', partSize: MIN_PART_SIZE, ticket: 't' })
    const firstUrl = await next(fake)
    expect(JSON.parse(String(firstUrl.body))).toMatchObject({ partNumbers: [1], sizes: { 1: MIN_PART_SIZE } })
    json(firstUrl, { urls: { 1: 'https://s3.test/b/k?partNumber=1' } })
    answerPart(await next(fake))
    await expect
      .poll(async () => store.get('recording-1'))
      .toMatchObject({
        sizeUnknown: true,
        size: 0,
        partCount: 0,
        uploadId: 'u',
        ticket: 't',
        parts: [{ partNumber: 1 }],
      })
    // The page goes (here: aborted, its parts left): the record stays for the next visit.
    controller.abort()
    await expect(streamed).rejects.toThrow()
    expect(await store.get('recording-1')).toMatchObject({ sizeUnknown: true })

    const carried = uploadPresigned(new File([bytes], 'r.webm', { type: 'video/webm' }), {
      api: API_URL,
      transport: fake.transport,
      resume,
      fingerprint: 'recording-1',
      partConcurrency: 1,
    })
    const listing = await next(fake)
    expect(listing.step).toBe('POST /list-parts')
    json(listing, { parts: [{ partNumber: 1, etag: '"PUT ?partNumber=1"', size: MIN_PART_SIZE }] })
    const urls = await next(fake)
    expect(JSON.parse(String(urls.body))).toEqual({
      ticket: 't',
      partNumbers: [2, 3],
      sizes: { 2: MIN_PART_SIZE, 3: 100 },
    })
    json(urls, { urls: { 2: 'https://s3.test/b/k?partNumber=2', 3: 'https://s3.test/b/k?partNumber=3' } })
    answerPart(await next(fake))
    answerPart(await next(fake))
    const complete = await next(fake)
    expect(JSON.parse(String(complete.body)).parts.map((part: { partNumber: number }) => part.partNumber)).toEqual([
      1, 2, 3,
    ])
    json(complete, completed)
    await expect(carried).resolves.toEqual(completed)
    expect(await store.list()).toEqual([])
  })

  it('a record of a known size is not carried on by a file of another size under the same fingerprint: a fresh upload', async () => {
    const store = memoryResumeStore()
    await store.put({ ...(await recorded()), fingerprint: 'named' })
    const fake = stepThroughTransport()
    const other = new File([new Uint8Array(SIZE + 1)], 'r.bin')
    void uploadPresigned(other, {
      api: API_URL,
      transport: fake.transport,
      resume: resumeUploads({ store }),
      fingerprint: 'named',
    }).catch(() => {})
    expect((await next(fake)).step).toBe('POST /')
  })
})
