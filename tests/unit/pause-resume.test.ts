// Issue 13, step by step: pause is not abort. Each request is held by the step-through
// transport, so the tests see what is in flight the moment a pause or resume happens.
import { afterEach, describe, expect, it, vi } from 'vitest'
import { PauseController, type UploadState, uploadObject } from '../../engine/index.ts'
import { uploadPresigned } from '../../engine/presigned.ts'
import type { ObjectTarget } from '../../engine/upload-object.ts'
import { MIN_PART_SIZE } from '../../protocol/limits.ts'
import { lostReply, type PendingRequest, settle, stepThroughTransport, xml } from '../helpers/fake-transport.ts'

const THREE_PARTS = 2 * MIN_PART_SIZE + 1000
const STALL = 60

function setup(size: number, options: Partial<ObjectTarget> = {}) {
  const fake = stepThroughTransport()
  const controller = new AbortController()
  const pauses = new PauseController()
  const progress: number[] = []
  const states: UploadState[] = []
  const cleanup = vi.fn()
  let settled = false
  const result = uploadObject(new Blob([new Uint8Array(size)]), {
    bucket: 'bucket',
    key: 'k.bin',
    region: 'us-east-1',
    credentials: { accessKeyId: 'AKID', secretAccessKey: 'SECRET' },
    transport: fake.transport,
    stallTimeout: STALL,
    partConcurrency: 2,
    signal: controller.signal,
    pauseSignal: pauses.signal,
    onProgress: ({ loaded }) => progress.push(loaded),
    onStateChange: (state) => states.push(state),
    onCleanup: cleanup,
    ...options,
    retry: { delay: 1, ...options.retry },
  })
  result.then(
    () => (settled = true),
    () => (settled = true),
  )
  return { fake, controller, pauses, progress, states, cleanup, result, isSettled: () => settled }
}

const next = async (fake: ReturnType<typeof stepThroughTransport>) => (await fake.waitForPending())[0]!
const answerPart = (part: PendingRequest) => {
  part.onProgress?.((part.body as Blob).size)
  part.respond(200, { ETag: `"${part.step}"` })
}
const increasing = (values: number[]) => values.every((value, i) => i === 0 || value > values[i - 1]!)

afterEach(() => {
  vi.unstubAllGlobals()
})

describe('pause and resume a multipart upload', () => {
  // Regression (issue 24): a pause cancelled a part whose whole body had reached storage while its
  // 200 was on the way back, and resume sent it again in full. Its reply is now awaited.
  it('a part whose last byte has left is not cancelled by a pause: its reply counts, and resume never sends it again', async () => {
    const { fake, pauses, result } = setup(THREE_PARTS)
    ;(await next(fake)).respond(200, {}, xml.created())
    const [first, second] = (await fake.waitForPending(2)).sort((a, b) => a.step.localeCompare(b.step))
    first!.onProgress?.((first!.body as Blob).size)
    second!.onProgress?.(MIN_PART_SIZE / 2)
    pauses.pause()
    expect(first!.signal!.aborted).toBe(false)
    expect(second!.signal!.aborted).toBe(true)
    first!.respond(200, { ETag: `"${first!.step}"` })
    await settle(STALL * 3)
    expect(fake.pending).toEqual([])

    pauses.resume()
    const resent = await fake.waitForPending(2)
    expect(resent.map((request) => request.step).sort()).toEqual(['PUT ?partNumber=2', 'PUT ?partNumber=3'])
    resent.forEach(answerPart)
    ;(await next(fake)).respond(200, {}, xml.completed('"done"'))
    await result
    expect(fake.log.filter((step) => step === 'PUT ?partNumber=1')).toHaveLength(1)
  })

  it('pause cancels the parts in flight, starts none, sends no abort; resume sends only what is missing, once', async () => {
    const { fake, pauses, progress, states, result, isSettled, cleanup } = setup(THREE_PARTS)
    ;(await next(fake)).respond(200, {}, xml.created())
    // Parts 1 and 2 start together and are signed concurrently: either may arrive first.
    const [first, second] = (await fake.waitForPending(2)).sort((a, b) => a.step.localeCompare(b.step))
    answerPart(first!)
    // Part 2 has sent half its bytes when the pause comes; part 3 is about to start.
    second!.onProgress?.(MIN_PART_SIZE / 2)
    const third = (await fake.waitForPending(2)).find((request) => request.step === 'PUT ?partNumber=3')!
    const beforePause = progress.at(-1)!
    pauses.pause()
    expect(second!.signal!.aborted).toBe(true)
    expect(third.signal!.aborted).toBe(true)
    // Well past the stall timeout and every backoff: nothing is sent, nothing fails.
    await settle(STALL * 3)
    expect(fake.pending).toEqual([])
    expect(isSettled()).toBe(false)
    expect(states).toEqual(['paused'])
    expect([fake.log[0], ...fake.log.slice(1, 3).sort(), ...fake.log.slice(3)]).toEqual([
      'POST ?uploads',
      'PUT ?partNumber=1',
      'PUT ?partNumber=2',
      'PUT ?partNumber=3',
    ])

    pauses.resume()
    const resent = await fake.waitForPending(2)
    expect(resent.map((request) => request.step).sort()).toEqual(['PUT ?partNumber=2', 'PUT ?partNumber=3'])
    resent.forEach(answerPart)
    const complete = await next(fake)
    expect(complete.step).toBe('POST ?uploadId')
    expect(complete.body).toContain('<PartNumber>1</PartNumber><ETag>"PUT ?partNumber=1"</ETag>')
    complete.respond(200, {}, xml.completed())
    await expect(result).resolves.toMatchObject({ etag: '"final-3"' })
    expect(states).toEqual(['paused', 'running'])
    // Part 1 went once; no AbortMultipartUpload at any point.
    expect(fake.log.filter((step) => step === 'PUT ?partNumber=1')).toHaveLength(1)
    expect(fake.log).not.toContain('DELETE ?uploadId')
    // Progress held its mark through the pause (the cancelled bytes stopped counting) and never went back.
    expect(progress).toContain(beforePause)
    expect(increasing(progress)).toBe(true)
    expect(progress.at(-1)).toBe(THREE_PARTS)
    expect(cleanup).toHaveBeenCalledWith(undefined)
  })

  it('started paused: CreateMultipartUpload goes, no part does until resume', async () => {
    const { fake, pauses, result } = setup(THREE_PARTS)
    pauses.pause()
    ;(await next(fake)).respond(200, {}, xml.created())
    await settle(STALL * 2)
    expect(fake.pending).toEqual([])
    pauses.resume()
    for (let i = 0; i < 3; i++) answerPart(await next(fake))
    ;(await next(fake)).respond(200, {}, xml.completed())
    await result
    // The three parts start together and are signed concurrently: any order among them.
    expect([fake.log[0], ...fake.log.slice(1, 4).sort(), fake.log[4]]).toEqual([
      'POST ?uploads',
      'PUT ?partNumber=1',
      'PUT ?partNumber=2',
      'PUT ?partNumber=3',
      'POST ?uploadId',
    ])
    expect(fake.log).toHaveLength(5)
  })

  it('no retry is spent while paused: a pause during backoff cancels the retry; resume starts with a fresh budget', async () => {
    const retries = vi.fn()
    const { fake, pauses, result } = setup(THREE_PARTS, {
      partConcurrency: 1,
      retry: { limit: 1, delay: 10 * STALL },
      onRetry: retries,
    })
    ;(await next(fake)).respond(200, {}, xml.created())
    ;(await next(fake)).respond(500, {}, xml.error('InternalError'))
    await vi.waitFor(() => expect(retries).toHaveBeenCalledTimes(1), { interval: 1 })
    pauses.pause()
    await settle(STALL * 3)
    expect(fake.pending).toEqual([])
    expect(fake.log).toEqual(['POST ?uploads', 'PUT ?partNumber=1'])
    pauses.resume()
    // A 500 again: with the budget of 2 carried over this would fail the upload; it is fresh.
    ;(await next(fake)).respond(500, {}, xml.error('InternalError'))
    for (let i = 0; i < 3; i++) answerPart(await next(fake))
    ;(await next(fake)).respond(200, {}, xml.completed())
    await expect(result).resolves.toBeDefined()
  })

  it('abort while paused rejects at once with AbortError and cleans up', async () => {
    const { fake, pauses, controller, result, cleanup } = setup(THREE_PARTS)
    ;(await next(fake)).respond(200, {}, xml.created())
    await fake.waitForPending(2)
    pauses.pause()
    controller.abort()
    await expect(result).rejects.toMatchObject({ name: 'AbortError', message: 'Upload aborted' })
    ;(await next(fake)).respond(204)
    await vi.waitFor(() => expect(cleanup).toHaveBeenCalledWith(undefined))
    expect(fake.log.at(-1)).toBe('DELETE ?uploadId')
  })

  it('pause and resume in one breath: the cancelled parts are sent again', async () => {
    const { fake, pauses, result } = setup(THREE_PARTS)
    ;(await next(fake)).respond(200, {}, xml.created())
    await fake.waitForPending(2)
    pauses.pause()
    pauses.resume()
    const [a, b] = await fake.waitForPending(2)
    answerPart(a!)
    answerPart(b!)
    answerPart(await next(fake))
    ;(await next(fake)).respond(200, {}, xml.completed())
    await result
    expect(fake.log.filter((step) => step.startsWith('PUT')).length).toBe(5)
  })
})

describe('pause a single PUT', () => {
  it('pause cancels it, resume sends it again whole', async () => {
    const { fake, pauses, progress, result } = setup(1000)
    const put = await next(fake)
    put.onProgress?.(400)
    pauses.pause()
    expect(put.signal!.aborted).toBe(true)
    await settle(STALL * 2)
    expect(fake.pending).toEqual([])
    pauses.resume()
    const again = await next(fake)
    expect((again.body as Blob).size).toBe(1000)
    again.onProgress?.(1000)
    again.respond(200, { ETag: '"e"' })
    await expect(result).resolves.toMatchObject({ etag: '"e"' })
    expect(increasing(progress)).toBe(true)
    expect(fake.log).toEqual(['PUT', 'PUT'])
  })

  it('once its last byte has left, a pause does not cancel it: storage may be writing the object', async () => {
    const { fake, pauses, result } = setup(1000)
    const put = await next(fake)
    put.onProgress?.(1000)
    pauses.pause()
    expect(put.signal!.aborted).toBe(false)
    put.respond(200, { ETag: '"e"' })
    await expect(result).resolves.toMatchObject({ etag: '"e"' })
  })
})

describe('pause and cancel a POST form (formUploads)', () => {
  // A form goes where a single PUT goes (engine/s3/put.ts), its fields before the file's bytes.
  function formUpload() {
    const fake = stepThroughTransport()
    const pauses = new PauseController()
    const controller = new AbortController()
    const result = uploadPresigned(new Blob([new Uint8Array(1000)]), {
      api: 'https://app.test/api/s3-upload',
      transport: fake.transport,
      stallTimeout: STALL,
      pauseSignal: pauses.signal,
      signal: controller.signal,
      retry: { delay: 1 },
    })
    result.catch(() => {})
    const reply = {
      key: 'k',
      bucket: 'b',
      region: 'us-east-1',
      form: { url: 'https://s3.test/b', fields: { key: 'k', Policy: 'p', 'X-Amz-Signature': 's' } },
      ticket: 't',
    }
    return { fake, pauses, controller, result, reply }
  }

  it('pause cancels the form mid-file; resume sends the whole form again, then /complete', async () => {
    const { fake, pauses, result, reply } = formUpload()
    const asked = await next(fake)
    expect(JSON.parse(String(asked.body))).toMatchObject({ form: true })
    asked.respond(200, {}, JSON.stringify(reply))
    const post = await next(fake)
    expect([post.method, post.url]).toEqual(['POST', 'https://s3.test/b'])
    const whole = (post.body as Blob).size
    post.onProgress?.(whole - 600)
    pauses.pause()
    expect(post.signal!.aborted).toBe(true)
    await settle(STALL * 2)
    expect(fake.pending).toEqual([])
    pauses.resume()
    const again = await next(fake)
    expect([again.method, again.url, (again.body as Blob).size]).toEqual(['POST', 'https://s3.test/b', whole])
    again.onProgress?.(whole)
    again.respond(204, { ETag: '"e"' })
    const complete = await next(fake)
    expect(complete.step).toBe('POST /complete')
    complete.respond(200, {}, JSON.stringify({ url: 'https://s3.test/b/k', bucket: 'b', key: 'k', etag: '"e"' }))
    await expect(result).resolves.toMatchObject({ key: 'k', etag: '"e"' })
  })

  it('cancel mid-form rejects at once with AbortError, and nothing is confirmed', async () => {
    const { fake, controller, result, reply } = formUpload()
    ;(await next(fake)).respond(200, {}, JSON.stringify(reply))
    const post = await next(fake)
    post.onProgress?.(100)
    controller.abort()
    await expect(result).rejects.toMatchObject({ name: 'AbortError' })
    expect(post.signal!.aborted).toBe(true)
    expect(fake.log.filter((step) => step.includes('/complete'))).toEqual([])
  })
})

describe('waitForNetwork', () => {
  /** A browser-like global: online/offline events and navigator.onLine. */
  function fakeBrowser() {
    const window = new EventTarget()
    const navigator = { onLine: true }
    vi.stubGlobal('addEventListener', window.addEventListener.bind(window))
    vi.stubGlobal('removeEventListener', window.removeEventListener.bind(window))
    vi.stubGlobal('navigator', navigator)
    return {
      offline() {
        navigator.onLine = false
        window.dispatchEvent(new Event('offline'))
      },
      online() {
        navigator.onLine = true
        window.dispatchEvent(new Event('online'))
      },
    }
  }

  it('the offline event holds the upload (parts cancelled, no failure); online resumes it by itself', async () => {
    const browser = fakeBrowser()
    const { fake, states, result, isSettled } = setup(THREE_PARTS, { waitForNetwork: true })
    ;(await next(fake)).respond(200, {}, xml.created())
    const [first, second] = (await fake.waitForPending(2)).sort((a, b) => a.step.localeCompare(b.step))
    answerPart(first!)
    await settle()
    browser.offline()
    expect(second!.signal!.aborted).toBe(true)
    await settle(STALL * 3)
    expect(isSettled()).toBe(false)
    expect(fake.pending).toEqual([])
    expect(states).toEqual(['waiting-for-network'])
    browser.online()
    const resent = await fake.waitForPending(2)
    resent.forEach(answerPart)
    ;(await next(fake)).respond(200, {}, xml.completed())
    await result
    expect(states).toEqual(['waiting-for-network', 'running'])
    expect(fake.log.filter((step) => step === 'PUT ?partNumber=1')).toHaveLength(1)
  })

  it('network errors past the retry budget wait for the network instead of failing', async () => {
    const browser = fakeBrowser()
    const { fake, states, result, isSettled } = setup(THREE_PARTS, {
      waitForNetwork: true,
      retry: { limit: 1 },
      partConcurrency: 1,
    })
    ;(await next(fake)).respond(200, {}, xml.created())
    ;(await next(fake)).fail(lostReply())
    ;(await next(fake)).fail(lostReply())
    await settle(STALL)
    expect(states).toEqual(['waiting-for-network'])
    expect(isSettled()).toBe(false)
    expect(fake.pending).toEqual([])
    browser.online()
    for (let i = 0; i < 3; i++) answerPart(await next(fake))
    ;(await next(fake)).respond(200, {}, xml.completed())
    await result
    expect(states).toEqual(['waiting-for-network', 'running'])
  })

  it('regression: a single PUT of an upload given no AbortSignal failed past the budget; now it waits for the network too', async () => {
    const browser = fakeBrowser()
    const { fake, states, result, isSettled } = setup(1000, {
      waitForNetwork: true,
      retry: { limit: 1 },
      signal: undefined,
    })
    ;(await next(fake)).fail(lostReply())
    ;(await next(fake)).fail(lostReply())
    await settle(STALL)
    expect(isSettled()).toBe(false)
    expect(states).toEqual(['waiting-for-network'])
    browser.online()
    ;(await next(fake)).respond(200, { ETag: '"e"' })
    await expect(result).resolves.toMatchObject({ etag: '"e"' })
  })

  it('regression: a /parts batch that failed while offline was cached, so the part failed again after online; now it is asked again', async () => {
    const browser = fakeBrowser()
    const fake = stepThroughTransport()
    const pauses = new PauseController()
    const result = uploadPresigned(new Blob([new Uint8Array(MIN_PART_SIZE + 10)]), {
      api: 'https://app.test/api/s3-upload',
      transport: fake.transport,
      pauseSignal: pauses.signal,
      waitForNetwork: true,
      retry: { limit: 0, delay: 1 },
      partConcurrency: 1,
    })
    const reply = {
      key: 'k',
      bucket: 'b',
      region: 'us-east-1',
      uploadId: 'u',
      partSize: MIN_PART_SIZE,
      partCount: 2,
      ticket: 't',
    }
    ;(await next(fake)).respond(200, {}, JSON.stringify(reply))
    const parts = await next(fake)
    expect(parts.step).toBe('POST /parts')
    parts.fail(lostReply())
    await settle(STALL)
    browser.online()
    const again = await next(fake)
    expect(again.step).toBe('POST /parts')
    again.respond(
      200,
      {},
      JSON.stringify({ urls: { 1: 'https://s3.test/b/k?partNumber=1', 2: 'https://s3.test/b/k?partNumber=2' } }),
    )
    answerPart(await next(fake))
    answerPart(await next(fake))
    ;(await next(fake)).respond(
      200,
      {},
      JSON.stringify({ url: 'https://s3.test/b/k', bucket: 'b', key: 'k', etag: '"e"' }),
    )
    await expect(result).resolves.toMatchObject({ etag: '"e"' })
  })

  it('without waitForNetwork, network errors past the budget still fail the upload', async () => {
    const { fake, result } = setup(1000, { retry: { limit: 1 } })
    ;(await next(fake)).fail(lostReply())
    ;(await next(fake)).fail(lostReply())
    await expect(result).rejects.toMatchObject({ name: 'NetworkError' })
  })
})
