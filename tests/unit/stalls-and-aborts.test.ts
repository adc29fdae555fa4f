// Issue 11, storage side, step by step: each test is named after a finding of the fault campaign
// that ran against Ceph RGW (hangs, aborts that waited for cleanup, orphans, an untruthful
// settle), and fails without its fix.
import { describe, expect, it, vi } from 'vitest'
import { NetworkError, S3Error, UploadAbortedError, uploadObject } from '../../engine/index.ts'
import type { ObjectTarget } from '../../engine/upload-object.ts'
import { MIN_PART_SIZE } from '../../protocol/limits.ts'
import { lostReply, type PendingRequest, settle, stepThroughTransport, xml } from '../helpers/fake-transport.ts'

const TWO_PARTS = MIN_PART_SIZE + 1000
const STALL = 60

function setup(size: number, options: Partial<ObjectTarget> = {}) {
  const fake = stepThroughTransport()
  const controller = new AbortController()
  const progress: number[] = []
  const cleanup = vi.fn()
  const result = uploadObject(new Blob([new Uint8Array(size)]), {
    bucket: 'bucket',
    key: 'k.bin',
    region: 'us-east-1',
    credentials: { accessKeyId: 'AKID', secretAccessKey: 'SECRET' },
    transport: fake.transport,
    stallTimeout: STALL,
    partConcurrency: 1,
    signal: controller.signal,
    onProgress: ({ loaded }) => progress.push(loaded),
    onCleanup: cleanup,
    ...options,
    retry: { delay: 1, ...options.retry },
  })
  result.catch(() => {})
  /** Resolves with the outcome, a value or an error. */
  const outcome = () =>
    result.then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    )
  return { fake, controller, progress, cleanup, result, outcome }
}

/** The next request to arrive, after those already answered. */
const next = async (fake: ReturnType<typeof stepThroughTransport>) => (await fake.waitForPending())[0]!
const answerPart = (part: PendingRequest) => {
  part.onProgress?.((part.body as Blob).size)
  part.respond(200, { ETag: `"${part.step}"` })
}
/** Create answered, both parts on storage: what comes next is CompleteMultipartUpload. */
async function uploadBothParts(fake: ReturnType<typeof stepThroughTransport>) {
  ;(await next(fake)).respond(200, {}, xml.created())
  answerPart(await next(fake))
  answerPart(await next(fake))
}

describe('hangs', () => {
  it('regression: a request that gets no answer waited forever; now it is cancelled after stallTimeout and retried', async () => {
    const { fake, result } = setup(10)
    const silent = await next(fake)
    await settle(STALL * 2)
    expect(silent.signal!.aborted).toBe(true)
    const retry = await next(fake)
    expect(retry).not.toBe(silent)
    retry.respond(200, { ETag: '"e"' })
    await expect(result).resolves.toMatchObject({ etag: '"e"' })
    expect(fake.log).toEqual(['PUT', 'PUT'])
  })

  it('regression: a mid-body stall sat out 60 s; stalls are measured from the last byte, so a slow moving body is never cut', async () => {
    // The engine's clock and timers are faked: what is asserted is when the watchdog fires in
    // stall-timeout terms, never how late a loaded machine runs a real timer.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] })
    try {
      const { fake, result } = setup(1000)
      const put = await next(fake)
      // Moving, slowly: a byte every STALL/3 ms for 4 × STALL ms in all.
      for (let sent = 1; sent <= 12; sent++) {
        put.onProgress?.(sent)
        await vi.advanceTimersByTimeAsync(STALL / 3)
      }
      expect(put.signal!.aborted).toBe(false)
      // Then silence: cut.
      await vi.advanceTimersByTimeAsync(STALL * 2)
      expect(put.signal!.aborted).toBe(true)
      const retry = await next(fake)
      retry.respond(200, { ETag: '"e"' })
      await result
    } finally {
      vi.useRealTimers()
    }
  })

  it('a stalled request that never comes back fails as a NetworkError naming the stall, after the last try', async () => {
    const { fake, result } = setup(10, { retry: { limit: 1 } })
    await next(fake)
    const error = await result.catch((e: unknown) => e)
    expect(error).toBeInstanceOf(NetworkError)
    expect((error as Error).message).toBe(
      `No progress for ${STALL} ms on PUT https://bucket.s3.us-east-1.amazonaws.com`,
    )
    expect(fake.log).toEqual(['PUT', 'PUT'])
  })
})

describe('abort', () => {
  it('regression: with AbortMultipartUpload stalled, upload() rejected 119 s after abort(); now at once, cleanup in the background', async () => {
    const { fake, controller, cleanup, outcome } = setup(TWO_PARTS, { cleanupTimeout: 10 * STALL })
    ;(await next(fake)).respond(200, {}, xml.created())
    await next(fake)
    const settled = outcome()
    controller.abort()
    const { error } = (await settled) as { error: Error }
    expect(error).toMatchObject({ name: 'AbortError', message: 'Upload aborted' })
    // "At once" as an order: the promise settled while the cleanup had not ended (onCleanup not
    // yet called). AbortMultipartUpload goes out and meets a silent store: it is retried until its
    // own deadline, then onCleanup hears that it failed.
    expect(cleanup).not.toHaveBeenCalled()
    expect((await next(fake)).step).toBe('DELETE ?uploadId')
    await vi.waitFor(() => expect(cleanup).toHaveBeenCalledTimes(1), { timeout: 20 * STALL })
    expect(cleanup.mock.calls[0]![0]).toBeDefined()
    expect(fake.log.filter((step) => step === 'DELETE ?uploadId').length).toBeGreaterThan(1)
  })

  it('regression: with AbortMultipartUpload answered 503 the rejection waited 40 s; now the cleanup retries on its own', async () => {
    const { fake, controller, cleanup, outcome } = setup(TWO_PARTS)
    ;(await next(fake)).respond(200, {}, xml.created())
    await next(fake)
    const settled = outcome()
    controller.abort()
    expect(await settled).toMatchObject({ error: { name: 'AbortError' } })
    ;(await next(fake)).respond(503, { 'Retry-After': '0' }, xml.error('SlowDown'))
    ;(await next(fake)).respond(204)
    await vi.waitFor(() => expect(cleanup).toHaveBeenCalledWith(undefined))
    expect(fake.log).toEqual(['POST ?uploads', 'PUT ?partNumber=1', 'DELETE ?uploadId', 'DELETE ?uploadId'])
  })

  it('regression: abort right after CreateMultipartUpload answered left the upload pending; now it is aborted', async () => {
    const { fake, controller, result, cleanup } = setup(TWO_PARTS)
    const create = await next(fake)
    create.respond(200, {}, xml.created('fresh'))
    controller.abort()
    await expect(result).rejects.toMatchObject({ name: 'AbortError' })
    const abort = await next(fake)
    expect(abort.step).toBe('DELETE ?uploadId')
    expect(new URL(abort.url).searchParams.get('uploadId')).toBe('fresh')
    abort.respond(204)
    await vi.waitFor(() => expect(cleanup).toHaveBeenCalledWith(undefined))
    expect(fake.log).not.toContain('PUT ?partNumber=1')
  })

  it('regression: abort while Create is in flight cancelled it and orphaned what storage created; now Create finishes in the background and is undone', async () => {
    const { fake, controller, outcome } = setup(TWO_PARTS)
    const create = await next(fake)
    const settled = outcome()
    controller.abort()
    expect(await settled).toMatchObject({ error: { name: 'AbortError' } })
    expect(create.signal!.aborted).toBe(false)
    create.respond(200, {}, xml.created('late'))
    const abort = await next(fake)
    expect(abort.step).toBe('DELETE ?uploadId')
    expect(new URL(abort.url).searchParams.get('uploadId')).toBe('late')
    abort.respond(204)
  })

  // Found by the soak: a Create refused (ExpiredToken) after the abort was signed again and re-sent.
  it('a Create refused after the abort is not signed again with fresh credentials', async () => {
    const refresh = vi.fn(async (_refused: boolean) => ({ accessKeyId: 'FRESH', secretAccessKey: 'S' }))
    const { fake, controller, result, cleanup } = setup(TWO_PARTS, { credentials: refresh })
    const create = await next(fake)
    controller.abort()
    create.respond(400, {}, xml.error('ExpiredToken'))
    await expect(result).rejects.toMatchObject({ name: 'AbortError' })
    // Whether that Create created anything is not known here (the abort hid the refusal): storage's
    // list of the key's uploads is asked, with the credentials in hand, never fresh ones.
    const list = await next(fake)
    expect(list.step).toBe('GET ?uploads')
    list.respond(200, {}, '<ListMultipartUploadsResult></ListMultipartUploadsResult>')
    await vi.waitFor(() => expect(cleanup).toHaveBeenCalledWith(undefined))
    expect(fake.log).toEqual(['POST ?uploads', 'GET ?uploads'])
    expect(refresh.mock.calls.every(([refused]) => refused === false)).toBe(true)
  })

  it('a failed Create is never retried after the abort', async () => {
    const { fake, controller, result, cleanup } = setup(TWO_PARTS, { abortOtherUploads: vi.fn(async () => {}) })
    const create = await next(fake)
    controller.abort()
    create.fail(lostReply())
    await expect(result).rejects.toMatchObject({ name: 'AbortError' })
    await vi.waitFor(() => expect(cleanup).toHaveBeenCalled())
    expect(fake.log).toEqual(['POST ?uploads'])
  })
})

describe('orphans', () => {
  it('regression: a lost Create reply was retried and the first upload orphaned; now the duplicates are aborted, keeping the one in use', async () => {
    const abortOtherUploads = vi.fn(async () => {})
    const { fake, result, cleanup } = setup(TWO_PARTS, { abortOtherUploads })
    ;(await next(fake)).fail(lostReply())
    ;(await next(fake)).respond(200, {}, xml.created('second'))
    answerPart(await next(fake))
    answerPart(await next(fake))
    ;(await next(fake)).respond(200, {}, xml.completed())
    await result
    await vi.waitFor(() => expect(cleanup).toHaveBeenCalledWith(undefined))
    expect(abortOtherUploads).toHaveBeenCalledExactlyOnceWith('second')
  })

  /** The request `step` among those waiting, once it arrives (a background cleanup runs beside the parts). */
  const take = async (fake: ReturnType<typeof stepThroughTransport>, step: string) => {
    for (let count = 1; ; count++) {
      const found = (await fake.waitForPending(count)).find((request) => request.step === step)
      if (found) return found
    }
  }
  const listing = (uploads: Array<[key: string, uploadId: string, initiated: string]>) =>
    `<ListMultipartUploadsResult><Bucket>bucket</Bucket><KeyMarker></KeyMarker><UploadIdMarker></UploadIdMarker>${uploads
      .map(
        ([key, id, at]) => `<Upload><Key>${key}</Key><UploadId>${id}</UploadId><Initiated>${at}</Initiated></Upload>`,
      )
      .join('')}</ListMultipartUploadsResult>`

  it("issue 33: with no abortOtherUploads, the engine lists the key's uploads itself and aborts those started within the Create call", async () => {
    const { fake, result, cleanup } = setup(TWO_PARTS)
    ;(await next(fake)).fail(lostReply())
    ;(await next(fake)).respond(200, {}, xml.created('second'))
    const list = await take(fake, 'GET ?uploads')
    // The bucket's URL (the object's without its key), for exactly this key.
    expect(list.url).toBe('https://bucket.s3.us-east-1.amazonaws.com/?uploads&prefix=k.bin')
    expect(list.headers?.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKID\//)
    list.respond(
      200,
      {},
      listing([
        ['k.bin', 'first', '2026-11-27T10:00:00.000Z'], // the lost reply's: just before the one in use
        ['k.bin', 'second', '2026-11-27T10:00:00.400Z'],
        ['k.bin', 'older', '2026-11-27T09:00:00.000Z'], // another writer's, long before the call
        ['k.bin.parts/x', 'other-key', '2026-11-27T10:00:00.100Z'], // another key with this prefix
      ]),
    )
    const abort = await take(fake, 'DELETE ?uploadId')
    expect(new URL(abort.url).searchParams.get('uploadId')).toBe('first')
    abort.respond(204)
    answerPart(await take(fake, 'PUT ?partNumber=1'))
    answerPart(await take(fake, 'PUT ?partNumber=2'))
    ;(await take(fake, 'POST ?uploadId')).respond(200, {}, xml.completed())
    await result
    await vi.waitFor(() => expect(cleanup).toHaveBeenCalledWith(undefined))
    expect(fake.log.filter((step) => step === 'DELETE ?uploadId')).toHaveLength(1)
  })

  it('issue 33: credentials that may not list leave the upload whole, and onCleanup hears that a stray may remain', async () => {
    const { fake, result, cleanup } = setup(TWO_PARTS)
    ;(await next(fake)).fail(lostReply())
    ;(await next(fake)).respond(200, {}, xml.created('second'))
    ;(await take(fake, 'GET ?uploads')).respond(403, {}, xml.error('AccessDenied'))
    answerPart(await take(fake, 'PUT ?partNumber=1'))
    answerPart(await take(fake, 'PUT ?partNumber=2'))
    ;(await take(fake, 'POST ?uploadId')).respond(200, {}, xml.completed())
    await expect(result).resolves.toMatchObject({ etag: '"final-3"' })
    await vi.waitFor(() => expect(cleanup).toHaveBeenCalledOnce())
    expect(cleanup.mock.calls[0]![0]).toMatchObject({
      name: 'UploadError',
      message: expect.stringMatching(
        /^CreateMultipartUpload was retried, and the uploads an earlier attempt may have left on k\.bin could not be listed or aborted \(AccessDenied: .*\): give credentials that may list/,
      ),
    })
  })

  it('a Create that worked at its first try looks for no duplicates', async () => {
    const abortOtherUploads = vi.fn(async () => {})
    const { fake, result } = setup(TWO_PARTS, { abortOtherUploads })
    await uploadBothParts(fake)
    ;(await next(fake)).respond(200, {}, xml.completed())
    await result
    expect(abortOtherUploads).not.toHaveBeenCalled()
  })

  it('regression: a faulted AbortMultipartUpload left an orphan; now it is retried within the cleanup deadline', async () => {
    const { fake, cleanup, result } = setup(TWO_PARTS)
    ;(await next(fake)).respond(200, {}, xml.created())
    ;(await next(fake)).respond(403, {}, xml.error('AccessDenied'))
    await expect(result).rejects.toMatchObject({ code: 'AccessDenied' })
    ;(await next(fake)).fail(lostReply())
    // The first AbortMultipartUpload did its work but its reply was lost: NoSuchUpload now means done.
    ;(await next(fake)).respond(404, {}, xml.error('NoSuchUpload'))
    await vi.waitFor(() => expect(cleanup).toHaveBeenCalledWith(undefined))
  })
})

describe('the truth at the end', () => {
  it('regression: abort after CompleteMultipartUpload succeeded rejected with AbortError while the object existed; now it resolves', async () => {
    const { fake, controller, result } = setup(TWO_PARTS)
    await uploadBothParts(fake)
    const complete = await next(fake)
    controller.abort()
    expect(complete.signal!.aborted).toBe(false)
    complete.respond(200, {}, xml.completed('"done"'))
    await expect(result).resolves.toMatchObject({ etag: '"done"' })
    expect(fake.log.at(-1)).toBe('POST ?uploadId')
  })

  it('an abort during Complete whose reply is lost asks once more: NoSuchUpload means the first try completed it', async () => {
    const { fake, controller, result } = setup(TWO_PARTS)
    await uploadBothParts(fake)
    const complete = await next(fake)
    controller.abort()
    complete.fail(lostReply())
    ;(await next(fake)).respond(404, {}, xml.error('NoSuchUpload'))
    await expect(result).resolves.toMatchObject({ key: 'k.bin', etag: '' })
    expect(fake.log.filter((step) => step === 'POST ?uploadId')).toHaveLength(2)
  })

  it('an abort during Complete that storage refuses rejects with AbortError, and cleans up', async () => {
    const { fake, controller, result } = setup(TWO_PARTS)
    await uploadBothParts(fake)
    const complete = await next(fake)
    controller.abort()
    complete.respond(400, {}, xml.error('InvalidPart'))
    await expect(result).rejects.toMatchObject({ name: 'AbortError' })
    expect((await next(fake)).step).toBe('DELETE ?uploadId')
  })

  it('without an abort, a lost Complete reply is retried and NoSuchUpload then counts as success', async () => {
    const { fake, result } = setup(TWO_PARTS)
    await uploadBothParts(fake)
    ;(await next(fake)).fail(lostReply())
    ;(await next(fake)).respond(404, {}, xml.error('NoSuchUpload'))
    await expect(result).resolves.toMatchObject({ key: 'k.bin' })
  })

  it('NoSuchUpload at the first Complete is an error: nothing says the upload was completed', async () => {
    const { fake, result } = setup(TWO_PARTS)
    await uploadBothParts(fake)
    ;(await next(fake)).respond(404, {}, xml.error('NoSuchUpload'))
    await expect(result).rejects.toBeInstanceOf(S3Error)
  })

  it('a single PUT whose last byte has left is not cancelled by abort: its reply decides', async () => {
    const { fake, controller, result } = setup(1000)
    const put = await next(fake)
    put.onProgress?.(1000)
    controller.abort()
    expect(put.signal!.aborted).toBe(false)
    put.respond(200, { ETag: '"stored"' })
    await expect(result).resolves.toMatchObject({ etag: '"stored"' })
  })

  it('a single PUT aborted mid-body is cancelled and rejects at once', async () => {
    const { fake, controller, result } = setup(1000)
    const put = await next(fake)
    put.onProgress?.(500)
    controller.abort()
    expect(put.signal!.aborted).toBe(true)
    await expect(result).rejects.toBeInstanceOf(UploadAbortedError)
  })
})

describe('progress', () => {
  it('regression: a part whose reply was a 5xx counted as sent, and progress sat at 100% through the retry', async () => {
    const { fake, progress, result } = setup(TWO_PARTS)
    ;(await next(fake)).respond(200, {}, xml.created())
    answerPart(await next(fake))
    const last = await next(fake)
    last.onProgress?.(1000)
    last.respond(500, {}, xml.error('InternalError'))
    expect(Math.max(...progress)).toBeLessThan(TWO_PARTS)
    answerPart(await next(fake))
    // Every part is on storage, but the object is not complete yet.
    expect(Math.max(...progress)).toBeLessThan(TWO_PARTS)
    ;(await next(fake)).respond(200, {}, xml.completed())
    await result
    expect(progress.at(-1)).toBe(TWO_PARTS)
    expect(progress).toEqual([...progress].sort((a, b) => a - b))
  })
})
