// Issue 12, the engine's side, step by step: once storage accepted the bytes, an upload whose
// reply carried a ticket ends with POST /complete (retried like any upload API call; an abort ends
// it at once), and its `serverData` is the result's; no ticket (a next-s3-upload route), no call.
import { describe, expect, expectTypeOf, it } from 'vitest'
import { ApiError, type UploadOptions, upload } from '../../engine/index.ts'
import { uploadPresigned } from '../../engine/presigned.ts'
import { uploadWithToken } from '../../engine/token.ts'
import type { JsonObject, JsonValue, PresignedPutReply, TokenReply, UploadTypes } from '../../protocol/wire.ts'
import { createUploadHandler } from '../../server/index.ts'
import { lostReply, type PendingRequest, stepThroughTransport } from '../helpers/fake-transport.ts'

const API_URL = 'https://app.test/api/s3-upload'
const putReply = (extra: Partial<PresignedPutReply> = {}): PresignedPutReply => ({
  key: 'k.png',
  bucket: 'bucket',
  region: 'us-east-1',
  url: 'https://s3.test/bucket/k.png?X-Amz-Signature=s',
  headers: { 'Content-Type': 'image/png' },
  ticket: 'put1.ticket',
  ...extra,
})
const tokenReply: TokenReply = {
  token: {
    Credentials: {
      AccessKeyId: 'A',
      SecretAccessKey: 'S',
      SessionToken: 'T',
      Expiration: new Date(Date.now() + 3_600_000).toISOString(),
    },
  },
  key: 'k.png',
  bucket: 'bucket',
  region: 'us-east-1',
  ticket: 'tok1.ticket',
}
const completed = { url: 'https://s3.test/bucket/k.png', bucket: 'bucket', key: 'k.png', etag: '"e"' }

function setup(options: UploadOptions = {}) {
  const fake = stepThroughTransport()
  const controller = new AbortController()
  const result = upload(new File([new Uint8Array(10)], 'k.png', { type: 'image/png' }), {
    api: API_URL,
    transport: fake.transport,
    strategy: 'presigned',
    stallTimeout: 200,
    signal: controller.signal,
    ...options,
    retry: { delay: 1, ...options.retry },
  })
  result.catch(() => {})
  const next = async () => (await fake.waitForPending())[0]!
  return { fake, controller, result, next }
}

const json = (request: PendingRequest, body: unknown, status = 200) =>
  request.respond(status, { 'content-type': 'application/json' }, JSON.stringify(body))
const bodyOf = (request: PendingRequest) => JSON.parse(String(request.body)) as Record<string, unknown>

describe('completion after storage accepted the bytes', () => {
  it('a single PUT with a ticket: POST /complete { ticket }, and serverData is the result’s', async () => {
    const { fake, result, next } = setup({ metadata: { album: 'holiday' } })
    const asked = await next()
    expect(bodyOf(asked)).toMatchObject({ metadata: { album: 'holiday' }, filesize: 10, filetype: 'image/png' })
    json(asked, putReply())
    ;(await next()).respond(200, { ETag: '"e"' })
    const complete = await next()
    expect(complete.step).toBe('POST /complete')
    // The ticket alone: metadata is the server's to read from it, never sent again.
    expect(bodyOf(complete)).toEqual({ ticket: 'put1.ticket' })
    json(complete, { ...completed, serverData: { photoId: 7 } })
    expect(await result).toEqual({ ...completed, serverData: { photoId: 7 } })
    expect(fake.log).toEqual(['POST /', 'PUT', 'POST /complete'])
  })

  it('token mode too, through uploadWithToken', async () => {
    const fake = stepThroughTransport()
    const result = uploadWithToken(new Blob([new Uint8Array(10)], { type: 'image/png' }), {
      api: API_URL,
      transport: fake.transport,
    })
    const next = async () => (await fake.waitForPending())[0]!
    json(await next(), tokenReply)
    ;(await next()).respond(200, { ETag: '"e"' })
    const complete = await next()
    expect(bodyOf(complete)).toEqual({ ticket: 'tok1.ticket' })
    json(complete, { ...completed, serverData: 'recorded' })
    expect((await result).serverData).toBe('recorded')
  })

  it('no ticket (a next-s3-upload route): no /complete, the upload ends at storage', async () => {
    const { fake, result, next } = setup()
    json(await next(), putReply({ ticket: undefined, headers: undefined }))
    ;(await next()).respond(200, { ETag: '"e"' })
    expect((await result).serverData).toBeUndefined()
    expect(fake.log).toEqual(['POST /', 'PUT'])
  })

  it('a refused completion fails the upload with the server’s reason, as an ApiError, not retried', async () => {
    const { fake, result, next } = setup()
    json(await next(), putReply())
    ;(await next()).respond(200, { ETag: '"e"' })
    const reason =
      'The uploaded object was refused and deleted: its first bytes do not match its declared type, image/png'
    json(await next(), { error: reason }, 422)
    const error = await result.catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(ApiError)
    expect(error).toMatchObject({ status: 422, message: reason })
    expect(fake.log).toEqual(['POST /', 'PUT', 'POST /complete'])
  })

  it('a /complete whose reply was lost is sent again, with the same ticket', async () => {
    const { fake, result, next } = setup()
    json(await next(), putReply())
    ;(await next()).respond(200, { ETag: '"e"' })
    ;(await next()).fail(lostReply())
    const again = await next()
    expect(bodyOf(again)).toEqual({ ticket: 'put1.ticket' })
    json(again, { ...completed, serverData: 1 })
    expect((await result).serverData).toBe(1)
    expect(fake.log).toEqual(['POST /', 'PUT', 'POST /complete', 'POST /complete'])
  })

  it('an abort while /complete is pending ends the upload at once with AbortError and cancels the call (issue 24: it waited for the verdict, for ever while the upload API was down)', async () => {
    const { controller, result, next } = setup()
    json(await next(), putReply())
    ;(await next()).respond(200, { ETag: '"e"' })
    const complete = await next()
    controller.abort()
    await expect(result).rejects.toMatchObject({ name: 'AbortError' })
    expect(complete.signal?.aborted).toBe(true)
  })

  it('with waitForNetwork and the upload API out of reach, an abort during /complete still ends the upload at once', async () => {
    const { PauseController } = await import('../../engine/index.ts')
    const { controller, result, next } = setup({
      pauseSignal: new PauseController().signal,
      waitForNetwork: true,
      retry: { limit: 1, delay: 1 },
    })
    json(await next(), putReply())
    ;(await next()).respond(200, { ETag: '"e"' })
    // The upload API is down: every /complete attempt fails on the network, past the retry budget,
    // and waitForNetwork then waits for the network to come back.
    for (let i = 0; i < 2; i++) (await next()).fail(lostReply())
    await new Promise((resolve) => setTimeout(resolve, 20))
    controller.abort()
    await expect(result).rejects.toMatchObject({ name: 'AbortError' })
  })

  it('types: the server config’s metadata and serverData types reach the page; plain JSON without them', () => {
    // Never called: only its type matters, as for a page importing `typeof handler` from its server.
    const makeHandler = () =>
      createUploadHandler({
        metadata: { parse: (sent: unknown) => sent as { album: string } },
        onUploadComplete: async ({ metadata, uploadId }) => ({ photoId: uploadId.length, album: metadata.album }),
      })
    type Handler = ReturnType<typeof makeHandler>
    expectTypeOf(upload<Handler>)
      .parameter(1)
      .exclude<undefined>()
      .toHaveProperty('metadata')
      .toEqualTypeOf<{ album: string } | undefined>()
    expectTypeOf(upload<Handler>)
      .returns.resolves.toHaveProperty('serverData')
      .toEqualTypeOf<{ photoId: number; album: string } | undefined>()
    expectTypeOf(uploadPresigned<UploadTypes<{ a: 1 }, 'ok'>>)
      .returns.resolves.toHaveProperty('serverData')
      .toEqualTypeOf<'ok' | undefined>()
    expectTypeOf(upload).returns.resolves.toHaveProperty('serverData').toEqualTypeOf<JsonValue | undefined>()
    expectTypeOf(upload)
      .parameter(1)
      .exclude<undefined>()
      .toHaveProperty('metadata')
      .toEqualTypeOf<JsonObject | undefined>()
  })
})
