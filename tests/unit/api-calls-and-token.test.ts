// Issue 11, the upload API side and token mode, step by step: upload API calls behave like storage calls
// (typed errors, retries, abort), prefetched part URLs never reject unheard, and token-mode
// credentials are renewed from the upload API for the same upload. Each test fails without its fix.
import { afterAll, describe, expect, it, vi } from 'vitest'
import { ApiError, isUploadError, NetworkError, type UploadOptions, upload } from '../../engine/index.ts'
import { learnServerTime } from '../../engine/s3/clock.ts'
import { nodeTransport } from '../../engine/transport/node-transport.ts'
import { MIN_PART_SIZE } from '../../protocol/limits.ts'
import type { PresignedMultipartReply, TokenReply } from '../../protocol/wire.ts'
import { lostReply, type PendingRequest, settle, stepThroughTransport, xml } from '../helpers/fake-transport.ts'

const API_URL = 'https://app.test/api/s3-upload'
const TWO_PARTS = MIN_PART_SIZE + 1000
const hourFromNow = () => new Date(Date.now() + 3_600_000).toISOString()

const credentials = (id: string, Expiration = hourFromNow()) => ({
  AccessKeyId: id,
  SecretAccessKey: `secret-${id}`,
  SessionToken: `session-${id}`,
  Expiration,
})
const tokenReply = (extra: Partial<TokenReply> = {}): TokenReply => ({
  token: { Credentials: credentials('FIRST') },
  key: 'k.bin',
  bucket: 'bucket',
  region: 'us-east-1',
  ticket: 'tok1.ticket',
  ...extra,
})
const multipartReply: PresignedMultipartReply = {
  key: 'k.bin',
  bucket: 'bucket',
  region: 'us-east-1',
  uploadId: 'u1',
  partSize: MIN_PART_SIZE,
  partCount: 2,
  ticket: 'v1.ticket',
}

function setup(size: number, options: UploadOptions = {}) {
  const fake = stepThroughTransport()
  const controller = new AbortController()
  const cleanup = vi.fn()
  const result = upload(new File([new Uint8Array(size)], 'k.bin'), {
    api: API_URL,
    strategy: 'token',
    transport: fake.transport,
    stallTimeout: 200,
    partConcurrency: 1,
    signal: controller.signal,
    onCleanup: cleanup,
    ...options,
    retry: { delay: 1, ...options.retry },
  })
  result.catch(() => {})
  const next = async () => (await fake.waitForPending())[0]!
  return { fake, controller, cleanup, result, next }
}

const json = (request: PendingRequest, body: unknown, status = 200) =>
  request.respond(status, { 'content-type': 'application/json' }, JSON.stringify(body))
const bodyOf = (request: PendingRequest) => JSON.parse(String(request.body)) as Record<string, unknown>
const keyIdOf = (request: PendingRequest) => /Credential=(\w+)\//.exec(request.headers!.authorization!)?.[1]
const answerPart = (part: PendingRequest) => part.respond(200, { ETag: `"${part.step}"` })
/** The upload API's /complete, which every upload with a ticket ends with once storage holds it. */
async function answerComplete(next: () => Promise<PendingRequest>) {
  const complete = await next()
  expect(complete.step).toBe('POST /complete')
  expect(bodyOf(complete)).toEqual({ ticket: 'tok1.ticket' })
  json(complete, { url: 'https://s3/k.bin', bucket: 'bucket', key: 'k.bin', etag: '"e"' })
}

describe('upload API calls', () => {
  it('regression: a network error on the upload API escaped as "TypeError: fetch failed"; now a NetworkError, retried', async () => {
    const { result, next } = setup(10, { strategy: 'presigned', retry: { limit: 1 } })
    ;(await next()).fail(lostReply())
    ;(await next()).fail(lostReply())
    const error = await result.catch((e: unknown) => e)
    expect(error).toBeInstanceOf(NetworkError)
    expect(isUploadError(error)).toBe(true)
  })

  it('regression: upload API calls were never retried, so one blip killed the upload; 5xx, 429 and 408 now are', async () => {
    const { fake, result, next } = setup(10, { strategy: 'presigned' })
    ;(await next()).respond(500, { 'content-type': 'text/plain' }, 'Internal Server Error')
    ;(await next()).respond(429, {}, '')
    ;(await next()).respond(408, {}, '')
    json(await next(), { key: 'k.bin', bucket: 'bucket', region: 'us-east-1', url: 'https://bucket.s3.test/k.bin?sig' })
    ;(await next()).respond(200, { ETag: '"e"' })
    await expect(result).resolves.toMatchObject({ etag: '"e"' })
    expect(fake.log).toEqual(['POST /', 'POST /', 'POST /', 'POST /', 'PUT'])
  })

  it('a reply that is not JSON names the URL and status, and the text of a plain-text one, never an HTML page', async () => {
    const notFound = setup(10)
    ;(await notFound.next()).respond(404, { 'content-type': 'text/html' }, '<!doctype html><h1>Not Found</h1>')
    await expect(notFound.result).rejects.toEqual(
      new ApiError('Upload API https://app.test/api/s3-upload answered HTTP 404', 404),
    )
    const broken = setup(10, { retry: { limit: 0 } })
    ;(await broken.next()).respond(500, { 'content-type': 'text/plain' }, 'Internal Server Error')
    await expect(broken.result).rejects.toEqual(
      new ApiError('Upload API https://app.test/api/s3-upload answered HTTP 500: Internal Server Error', 500),
    )
  })

  it('outside a browser, a relative upload API URL is refused with what to set, not a bare "Invalid URL"', async () => {
    const failure = upload(new Blob(['x']), { strategy: 'token', transport: nodeTransport })
    await expect(failure).rejects.toBeInstanceOf(TypeError)
    await expect(failure).rejects.toThrow(
      "updraft: '/api/s3-upload' is not an absolute URL: outside a browser, give your upload API's URL in full, e.g. api: 'https://",
    )
  })

  it('a refusal from the upload API is an ApiError with its own words, never retried', async () => {
    const { fake, result, next } = setup(10)
    json(await next(), { error: 'File type not allowed' }, 415)
    await expect(result).rejects.toEqual(new ApiError('File type not allowed', 415))
    expect(fake.log).toEqual(['POST /'])
  })

  it('regression: an abort during the first upload API call was a DOMException, not "Upload aborted"', async () => {
    const { controller, result, next } = setup(10)
    await next()
    controller.abort()
    await expect(result).rejects.toMatchObject({ name: 'AbortError', message: 'Upload aborted' })
    expect(isUploadError(await result.catch((e: unknown) => e))).toBe(true)
  })

  it('an abort during the presigned upload request lets it finish, then aborts the multipart upload it created', async () => {
    const { fake, controller, result, next, cleanup } = setup(TWO_PARTS, { strategy: 'presigned' })
    const request = await next()
    controller.abort()
    await expect(result).rejects.toMatchObject({ name: 'AbortError' })
    expect(request.signal!.aborted).toBe(false)
    json(request, multipartReply)
    const abort = await next()
    expect(abort.step).toBe('POST /abort')
    expect(bodyOf(abort)).toEqual({ ticket: 'v1.ticket' })
    json(abort, { aborted: true })
    await vi.waitFor(() => expect(cleanup).toHaveBeenCalledWith(undefined))
    expect(fake.log).toEqual(['POST /', 'POST /abort'])
  })

  it('regression: a /parts refusal rejected prefetched URL promises nobody awaited (Node exited with code 1)', async () => {
    // Two parts, one at a time: part 2's URL is prefetched with part 1's and never awaited.
    const { result, next } = setup(TWO_PARTS, { strategy: 'presigned' })
    json(await next(), multipartReply)
    const parts = await next()
    expect(bodyOf(parts)).toMatchObject({ partNumbers: [1, 2] })
    json(parts, { error: 'The upload ticket has expired: start the upload again' }, 403)
    await expect(result).rejects.toMatchObject({ name: 'ApiError', status: 403 })
    json(await next(), { aborted: true })
    // An unhandled rejection would fail this file (vitest's default, kept: see unhandled-rejections.test.ts).
    await settle(20)
  })
})

describe('token mode: fresh credentials for long uploads', () => {
  it('regression: ExpiredToken failed the upload; now /refresh renews the credentials for this ticket and the request is signed again', async () => {
    const { fake, result, next } = setup(TWO_PARTS)
    json(await next(), tokenReply())
    ;(await next()).respond(200, {}, xml.created())
    const first = await next()
    expect(keyIdOf(first)).toBe('FIRST')
    answerPart(first)
    const second = await next()
    second.respond(400, {}, xml.error('ExpiredToken', 'The provided token has expired.'))
    const refresh = await next()
    expect(refresh.step).toBe('POST /refresh')
    expect(bodyOf(refresh)).toEqual({ ticket: 'tok1.ticket' })
    json(refresh, { token: { Credentials: credentials('SECOND') } })
    const again = await next()
    expect(again.step).toBe('PUT ?partNumber=2')
    expect(keyIdOf(again)).toBe('SECOND')
    answerPart(again)
    const complete = await next()
    expect(keyIdOf(complete)).toBe('SECOND')
    complete.respond(200, {}, xml.completed())
    await answerComplete(next)
    await result
    // Part 1, finished with the old credentials, is not sent again.
    expect(fake.log).toEqual([
      'POST /',
      'POST ?uploads',
      'PUT ?partNumber=1',
      'PUT ?partNumber=2',
      'POST /refresh',
      'PUT ?partNumber=2',
      'POST ?uploadId',
      'POST /complete',
    ])
  })

  it('refreshes before the credentials expire, not only when storage refuses them', async () => {
    const { result, next } = setup(10)
    json(
      await next(),
      tokenReply({ token: { Credentials: credentials('SOON', new Date(Date.now() + 60_000).toISOString()) } }),
    )
    const refresh = await next()
    expect(refresh.step).toBe('POST /refresh')
    json(refresh, { token: { Credentials: credentials('FRESH') } })
    const put = await next()
    expect(keyIdOf(put)).toBe('FRESH')
    put.respond(200, { ETag: '"e"' })
    await answerComplete(next)
    await result
  })

  it('regression: the cleanup after expiry was refused with the same credentials (an orphan every time); it now uses fresh ones', async () => {
    const { controller, result, next } = setup(TWO_PARTS)
    json(await next(), tokenReply())
    ;(await next()).respond(200, {}, xml.created())
    await next()
    controller.abort()
    await expect(result).rejects.toMatchObject({ name: 'AbortError' })
    const abort = await next()
    expect(abort.step).toBe('DELETE ?uploadId')
    abort.respond(403, {}, '')
    json(await next(), { token: { Credentials: credentials('SECOND') } })
    const again = await next()
    expect(again.step).toBe('DELETE ?uploadId')
    expect(keyIdOf(again)).toBe('SECOND')
    again.respond(204)
  })

  it('a next-s3-upload API sends no ticket: refused credentials fail as they are', async () => {
    const { fake, result, next } = setup(10)
    json(await next(), tokenReply({ ticket: undefined }))
    ;(await next()).respond(400, {}, xml.error('ExpiredToken'))
    await expect(result).rejects.toMatchObject({ name: 'S3Error', code: 'ExpiredToken' })
    expect(fake.log).toEqual(['POST /', 'PUT'])
  })

  it('a retried Create asks the upload API to abort the duplicates on this key, keeping the upload in use', async () => {
    const { result, next, cleanup } = setup(TWO_PARTS)
    json(await next(), tokenReply())
    ;(await next()).fail(lostReply())
    ;(await next()).respond(200, {}, xml.created('second'))
    const duplicates = await next()
    expect(duplicates.step).toBe('POST /duplicates')
    expect(bodyOf(duplicates)).toEqual({ ticket: 'tok1.ticket', keep: 'second' })
    json(duplicates, { aborted: 1 })
    answerPart(await next())
    answerPart(await next())
    ;(await next()).respond(200, {}, xml.completed())
    await answerComplete(next)
    await result
    await vi.waitFor(() => expect(cleanup).toHaveBeenCalledWith(undefined))
  })
})

describe('clock skew', () => {
  // The learned offset is page-wide: put the page's own clock back for whatever runs next.
  afterAll(() => learnServerTime(new Date().toUTCString()))

  it('RequestTimeTooSkewed: the request is signed again with the time storage gave', async () => {
    const { result, next } = setup(10)
    // The page's clock is two hours behind storage's (and STS's, which wrote the expiry).
    const serverTime = new Date(Date.now() + 2 * 3_600_000)
    const expiration = new Date(serverTime.getTime() + 3_600_000).toISOString()
    json(await next(), tokenReply({ token: { Credentials: credentials('FIRST', expiration) } }))
    const put = await next()
    put.respond(
      403,
      {},
      `<Error><Code>RequestTimeTooSkewed</Code><Message>The difference between the request time and the current time is too large.</Message><ServerTime>${serverTime.toISOString()}</ServerTime></Error>`,
    )
    const again = await next()
    expect(again.step).toBe('PUT')
    const signedAt = Date.parse(
      again.headers!['x-amz-date']!.replace(/^(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)Z$/, '$1-$2-$3T$4:$5:$6Z'),
    )
    expect(Math.abs(signedAt - serverTime.getTime())).toBeLessThan(60_000)
    again.respond(200, { ETag: '"e"' })
    await answerComplete(next)
    await result
  })
})
