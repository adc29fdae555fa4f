import { describe, expect, it, vi } from 'vitest'
import { defaultRetry } from '../../engine/core/options.ts'
import { NetworkError, type RetryEvent, S3Error, UploadAbortedError, uploadObject } from '../../engine/index.ts'
import type { ObjectTarget } from '../../engine/upload-object.ts'
import { MIN_PART_SIZE } from '../../protocol/limits.ts'
import { type PendingRequest, stepThroughTransport, xml } from '../helpers/fake-transport.ts'

const THREE_PARTS = 2 * MIN_PART_SIZE + 1234

function setup(size: number, options: Partial<ObjectTarget> = {}) {
  const fake = stepThroughTransport()
  const file = new Blob([new Uint8Array(size)], { type: 'video/mp4' })
  const progress: Array<{ loaded: number; total: number }> = []
  const result = uploadObject(file, {
    bucket: 'bucket',
    key: 'dir/my file.mp4',
    region: 'eu-west-1',
    credentials: { accessKeyId: 'AKID', secretAccessKey: 'SECRET', sessionToken: 'SESSION' },
    transport: fake.transport,
    onProgress: (p) => progress.push(p),
    ...options,
  })
  // Unhandled until the test awaits it; keep Node from reporting that in between.
  result.catch(() => {})
  return { fake, file, progress, result }
}

const answerPart = (request: PendingRequest, etag = `"etag-${request.step.split('=')[1]}"`) => {
  request.onProgress?.((request.body as Blob).size)
  request.respond(200, { ETag: etag })
}

describe('single PutObject', () => {
  it('signs one PUT with UNSIGNED-PAYLOAD, the session token, type and cache headers, and sends the file itself', async () => {
    const { fake, file, result, progress } = setup(1000, { cacheControl: 'max-age=60' })
    const [put] = await fake.waitForPending()
    expect(put!.step).toBe('PUT')
    expect(put!.url).toBe('https://bucket.s3.eu-west-1.amazonaws.com/dir/my%20file.mp4')
    expect(put!.body).toBe(file)
    expect(put!.headers).toMatchObject({
      'content-type': 'video/mp4',
      'cache-control': 'max-age=60',
      'x-amz-content-sha256': 'UNSIGNED-PAYLOAD',
      'x-amz-security-token': 'SESSION',
    })
    expect(put!.headers!.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKID\/\d{8}\/eu-west-1\/s3\/aws4_request, SignedHeaders=cache-control;host;x-amz-content-sha256;x-amz-date;x-amz-security-token, Signature=[0-9a-f]{64}$/,
    )
    put!.respond(200, { ETag: '"abc"' })
    await expect(result).resolves.toEqual({
      url: 'https://bucket.s3.eu-west-1.amazonaws.com/dir/my%20file.mp4',
      bucket: 'bucket',
      key: 'dir/my file.mp4',
      etag: '"abc"',
    })
    expect(progress.at(-1)).toEqual({ loaded: 1000, total: 1000 })
  })

  it('sends a body of exactly one part size as a single PUT', async () => {
    const { fake, result } = setup(MIN_PART_SIZE)
    const [put] = await fake.waitForPending()
    put!.respond(200, { ETag: '"x"' })
    await result
    expect(fake.log).toEqual(['PUT'])
  })
})

describe('multipart upload', () => {
  it('creates, sends parts as Blob slices at most queueSize at a time, then completes with the ETags in order', async () => {
    const { fake, file, result, progress } = setup(THREE_PARTS, { partConcurrency: 2 })
    const [create] = await fake.waitForPending()
    expect(create!.step).toBe('POST ?uploads')
    expect(create!.headers).toMatchObject({ 'content-type': 'video/mp4' })
    create!.respond(200, {}, xml.created('id/with+chars'))

    // Started together, signed concurrently: they may reach the transport in either order.
    const firstTwo = (await fake.waitForPending(2)).sort((a, b) => a.step.localeCompare(b.step))
    expect(firstTwo.map((r) => r.step)).toEqual(['PUT ?partNumber=1', 'PUT ?partNumber=2'])
    expect(new URL(firstTwo[0]!.url).searchParams.get('uploadId')).toBe('id/with+chars')
    await new Promise((r) => setTimeout(r, 20))
    expect(fake.pending).toHaveLength(2) // part 3 waits for a free slot
    answerPart(firstTwo[1]!)
    const [, third] = await fake.waitForPending(2)
    expect(third!.step).toBe('PUT ?partNumber=3')
    expect((third!.body as Blob).size).toBe(1234)
    expect((firstTwo[0]!.body as Blob).size).toBe(MIN_PART_SIZE)
    answerPart(third!)
    answerPart(firstTwo[0]!)

    const [complete] = await fake.waitForPending()
    expect(complete!.step).toBe('POST ?uploadId')
    expect(complete!.body).toBe(
      '<CompleteMultipartUpload xmlns="http://s3.amazonaws.com/doc/2006-03-01/">' +
        '<Part><PartNumber>1</PartNumber><ETag>"etag-1"</ETag></Part>' +
        '<Part><PartNumber>2</PartNumber><ETag>"etag-2"</ETag></Part>' +
        '<Part><PartNumber>3</PartNumber><ETag>"etag-3"</ETag></Part>' +
        '</CompleteMultipartUpload>',
    )
    complete!.respond(200, {}, xml.completed('"final-3"'))
    await expect(result).resolves.toMatchObject({ etag: '"final-3"', key: 'dir/my file.mp4' })
    expect(progress.at(-1)).toEqual({ loaded: file.size, total: file.size })
    expect([fake.log[0], ...fake.log.slice(1, 3).sort(), ...fake.log.slice(3)]).toEqual([
      'POST ?uploads',
      'PUT ?partNumber=1',
      'PUT ?partNumber=2',
      'PUT ?partNumber=3',
      'POST ?uploadId',
    ])
  })

  it('fails a part without a readable ETag with the CORS ExposeHeaders hint, and aborts the upload', async () => {
    const { fake, result } = setup(THREE_PARTS, { partConcurrency: 1 })
    ;(await fake.waitForPending())[0]!.respond(200, {}, xml.created())
    ;(await fake.waitForPending())[0]!.respond(200, {}) // no ETag header
    const [abort] = await fake.waitForPending()
    expect(abort!.step).toBe('DELETE ?uploadId')
    abort!.respond(204)
    await expect(result).rejects.toThrow(/ETag is not readable: add "ETag" to the bucket's CORS ExposeHeaders/)
  })

  it('leaves the parts in place on failure when leavePartsOnError is set', async () => {
    const { fake, result } = setup(THREE_PARTS, { partConcurrency: 1, leavePartsOnError: true })
    ;(await fake.waitForPending())[0]!.respond(200, {}, xml.created())
    ;(await fake.waitForPending())[0]!.respond(404, {}, xml.error('NoSuchUpload', 'The upload does not exist'))
    await expect(result).rejects.toMatchObject({
      name: 'S3Error',
      code: 'NoSuchUpload',
      status: 404,
      requestId: 'REQ123',
    })
    expect(fake.log).toEqual(['POST ?uploads', 'PUT ?partNumber=1'])
  })

  it('fails on a 200 reply to Complete that holds an <Error>, then aborts', async () => {
    const { fake, result } = setup(THREE_PARTS, { partConcurrency: 4 })
    ;(await fake.waitForPending())[0]!.respond(200, {}, xml.created())
    for (const part of await fake.waitForPending(3)) answerPart(part)
    ;(await fake.waitForPending())[0]!.respond(
      200,
      {},
      xml.error('EntityTooSmall', 'Your proposed upload is smaller than the minimum allowed size'),
    )
    ;(await fake.waitForPending())[0]!.respond(204)
    await expect(result).rejects.toMatchObject({ code: 'EntityTooSmall', status: 200 })
    expect(fake.log.at(-1)).toBe('DELETE ?uploadId')
  })

  it('keeps the original error when the cleanup itself fails', async () => {
    const { fake, result } = setup(THREE_PARTS, { partConcurrency: 1, retry: { limit: 0 } })
    ;(await fake.waitForPending())[0]!.respond(200, {}, xml.created())
    ;(await fake.waitForPending())[0]!.respond(403, {}, xml.error('AccessDenied', 'Access Denied'))
    ;(await fake.waitForPending())[0]!.respond(500, {}, xml.error('InternalError'))
    await expect(result).rejects.toMatchObject({ code: 'AccessDenied' })
  })
})

describe('abort', () => {
  it('cancels every request in flight, sends AbortMultipartUpload and rejects with AbortError "Upload aborted"', async () => {
    const controller = new AbortController()
    const { fake, result } = setup(THREE_PARTS, { partConcurrency: 2, signal: controller.signal })
    ;(await fake.waitForPending())[0]!.respond(200, {}, xml.created())
    const inFlight = await fake.waitForPending(2)
    controller.abort()
    const [abort] = await fake.waitForPending()
    expect(abort!.step).toBe('DELETE ?uploadId')
    // Cleanup runs under its own deadline, not the caller's (aborted) signal.
    expect(abort!.signal!.aborted).toBe(false)
    expect(inFlight.every((r) => !fake.pending.includes(r))).toBe(true)
    abort!.respond(204)
    const error = await result.catch((e: unknown) => e)
    expect(error).toBeInstanceOf(UploadAbortedError)
    expect(error).toMatchObject({ name: 'AbortError', message: 'Upload aborted' })
    expect(fake.log).not.toContain('PUT ?partNumber=3')
  })

  it('rejects at once when the signal is already aborted, sending nothing', async () => {
    const { fake, result } = setup(1000, { signal: AbortSignal.abort() })
    await expect(result).rejects.toMatchObject({ name: 'AbortError', message: 'Upload aborted' })
    expect(fake.log).toEqual([])
  })

  it('stops a retry waiting out its backoff', async () => {
    const controller = new AbortController()
    const { fake, result } = setup(1000, { signal: controller.signal })
    ;(await fake.waitForPending())[0]!.respond(503, { 'Retry-After': '30' }, xml.error('SlowDown'))
    await new Promise((r) => setTimeout(r, 20))
    controller.abort()
    await expect(result).rejects.toMatchObject({ name: 'AbortError' })
    expect(fake.log).toEqual(['PUT'])
  })
})

describe('retries', () => {
  it('retries a part after a 500 without counting its bytes twice', async () => {
    const { fake, file, result, progress } = setup(THREE_PARTS, { partConcurrency: 1 })
    ;(await fake.waitForPending())[0]!.respond(200, {}, xml.created())
    const [first] = await fake.waitForPending()
    first!.onProgress?.(MIN_PART_SIZE / 2)
    first!.respond(500, { 'Retry-After': '0' }, xml.error('InternalError'))
    const [again] = await fake.waitForPending()
    expect(again!.step).toBe('PUT ?partNumber=1')
    again!.onProgress?.(MIN_PART_SIZE / 4)
    answerPart(again!)
    answerPart((await fake.waitForPending())[0]!)
    answerPart((await fake.waitForPending())[0]!)
    ;(await fake.waitForPending())[0]!.respond(200, {}, xml.completed())
    await result
    const loaded = progress.map((p) => p.loaded)
    expect(loaded).toEqual([...loaded].sort((a, b) => a - b))
    expect(Math.max(...loaded)).toBe(file.size)
    expect(progress.every((p) => p.total === file.size)).toBe(true)
  })

  it('retries network errors and 503 SlowDown, honouring Retry-After, up to `retries` attempts in all', async () => {
    // Fake timers: the engine says how long it waits (onRetry), and the third PUT leaves once the
    // faked clock reaches the second the server asked for, whatever a loaded machine does.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] })
    try {
      const retries: RetryEvent[] = []
      const { fake, result } = setup(1000, { retry: { limit: 2 }, onRetry: (event) => retries.push(event) })
      ;(await fake.waitForPending())[0]!.fail(new NetworkError('Network error on PUT https://bucket'))
      await vi.advanceTimersByTimeAsync(defaultRetry.delay) // the first backoff is at most the base delay
      ;(await fake.waitForPending())[0]!.respond(
        503,
        { 'Retry-After': '1' },
        xml.error('SlowDown', 'Please reduce your request rate.'),
      )
      await vi.advanceTimersByTimeAsync(999)
      expect(retries.map(({ attempt, delay }) => [attempt, delay])).toEqual([
        [1, expect.any(Number)],
        [2, 1000],
      ])
      expect(fake.log).toEqual(['PUT', 'PUT'])
      await vi.advanceTimersByTimeAsync(1)
      const [third] = await fake.waitForPending()
      third!.respond(503, {}, xml.error('SlowDown'))
      await expect(result).rejects.toMatchObject({ code: 'SlowDown', status: 503 })
      expect(fake.log).toEqual(['PUT', 'PUT', 'PUT'])
    } finally {
      vi.useRealTimers()
    }
  })

  it.each([
    [400, 'InvalidArgument'],
    [403, 'SignatureDoesNotMatch'],
    [404, 'NoSuchBucket'],
  ])('never retries a %i %s', async (status, code) => {
    const { fake, result } = setup(1000)
    ;(await fake.waitForPending())[0]!.respond(status, { 'x-amz-request-id': 'R1' }, xml.error(code, 'nope', ''))
    const error = await result.catch((e: unknown) => e)
    expect(error).toBeInstanceOf(S3Error)
    expect(error).toMatchObject({ code, status })
    expect(String((error as Error).message)).toContain(`${code}: nope (HTTP ${status}`)
    expect(fake.log).toEqual(['PUT'])
  })

  it('gives a reply without an XML body a code from its status', async () => {
    const { fake, result } = setup(1000)
    ;(await fake.waitForPending())[0]!.respond(403, { 'x-amz-request-id': 'R9' })
    await expect(result).rejects.toMatchObject({ code: 'Http403', requestId: 'R9' })
  })
})

describe('options', () => {
  it.each([
    [{ partConcurrency: 0 }, 'updraft: partConcurrency must be a whole number of at least 1, got 0'],
    [{ retry: { limit: 0.5 } }, 'updraft: retry.limit must be a whole number of at least 0, got 0.5'],
    [{ retry: { limit: -1 } }, 'updraft: retry.limit must be a whole number of at least 0, got -1'],
    [{ partSize: 1024 }, 'updraft: partSize must be a whole number from 5 MiB to 5 GiB, got 1024'],
    [{ bucket: 'a/b' }, "updraft: bucket must be a bucket name (a '/' is allowed only in an ARN), got 'a/b'"],
    [{ key: 'a/../b' }, "updraft: key must be non-empty with no '.' or '..' segments, got 'a/../b'"],
  ])('refuses %o before sending anything', async (options, message) => {
    const { fake, result } = setup(1000, options as Partial<ObjectTarget>)
    await expect(result).rejects.toThrow(message)
    expect(fake.log).toEqual([])
  })

  it('builds path-style and virtual-hosted URLs for custom endpoints', async () => {
    const pathStyle = setup(10, { endpoint: 'http://127.0.0.1:9000', forcePathStyle: true, key: "it's (1)!.txt" })
    expect((await pathStyle.fake.waitForPending())[0]!.url).toBe('http://127.0.0.1:9000/bucket/it%27s%20%281%29%21.txt')
    const hosted = setup(10, { endpoint: 'https://example.r2.dev' })
    expect((await hosted.fake.waitForPending())[0]!.url).toBe('https://bucket.example.r2.dev/dir/my%20file.mp4')
  })
})
