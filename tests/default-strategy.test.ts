// upload() with no `strategy` asks for token mode, the protocol's default. On a store with an STS
// (RGW, AssumeRole) it uploads in token mode; where the API has none (s3rver and Swift without
// one) the API refuses with `code: 'TokenModeUnavailable'`, the upload asks once more presigned,
// and the page's later uploads to that API go presigned at once. A named 'token' keeps the refusal.
// Every upload is read back and compared by sha256.
import { describe, expect, inject, it } from 'vitest'
import { readObject, sha256, testBytes } from '../dev/s3-client.ts'
import { storeConfig } from '../dev/stores.ts'
import { ApiError, type UploadOptions, upload } from '../engine/index.ts'
import type { TokenReply } from '../protocol/wire.ts'
import { createUploadHandler } from '../server/index.ts'
import { uploadApiFixture } from './helpers/upload-api-fixture.ts'

const MiB = 1024 * 1024
const rgw = inject('rgw')
const swift = inject('swift')
const { uploadApiFor, readerFor, s3rver, serve } = uploadApiFixture()

const fileOf = (bytes: Uint8Array<ArrayBuffer>) => new File([bytes], 'data.bin', { type: 'application/octet-stream' })

describe('upload() with no strategy', () => {
  it('on RGW with an STS: token mode at once (one upload request, credentials issued), single PUT and multipart, bytes exact', async () => {
    const { api, calls, client } = await uploadApiFor(rgw, {
      sts: { mode: 'assume-role', roleArn: rgw.roleArn, endpoint: rgw.endpoint },
    })
    for (const [size, seed] of [
      [200_000, 1],
      [11 * MiB, 2],
    ] as const) {
      const bytes = testBytes(size, seed)
      const result = await upload(fileOf(bytes), { api })
      expect(sha256(await readObject(client, result.bucket, result.key))).toBe(sha256(bytes))
    }
    const requests = calls.filter((call) => call.route === '')
    expect(requests.map((call) => [call.body.strategy, call.status])).toEqual([
      ['token', 200],
      ['token', 200],
    ])
    expect((requests[0]!.reply as TokenReply).token.Credentials.AccessKeyId).not.toBe(rgw.credentials.accessKeyId)
  })

  describe.each([
    ['s3rver', () => s3rver()],
    ['Swift', () => swift],
  ])('on %s without an STS', (_name, store) => {
    it('the first upload asks again presigned after one refusal; the next goes presigned at once; bytes exact', async () => {
      const { api, calls, client } = await uploadApiFor(store())
      const first = testBytes(300_000, 3)
      const second = testBytes(11 * MiB, 4)
      for (const bytes of [first, second]) {
        const result = await upload(fileOf(bytes), { api, partSize: 5 * MiB })
        expect(sha256(await readObject(client, result.bucket, result.key))).toBe(sha256(bytes))
      }
      const requests = calls.filter((call) => call.route === '')
      expect(requests.map((call) => [call.body.strategy, call.status])).toEqual([
        ['token', 400],
        ['presigned', 200],
        ['presigned', 200],
      ])
      expect(requests[0]!.reply).toMatchObject({ code: 'TokenModeUnavailable' })
      // The refused request created nothing: the token fields it sent are not in the presigned one.
      expect(requests[1]!.body.createMultipart).toBeUndefined()
    })

    it('files started together ask token mode once: the others wait for its answer and go presigned; bytes exact', async () => {
      const { api, calls, client } = await uploadApiFor(store())
      const files = Array.from({ length: 12 }, (_, i) => testBytes(20_000 + i, 20 + i))
      const results = await Promise.all(files.map((bytes) => upload(fileOf(bytes), { api })))
      for (const [i, result] of results.entries())
        expect(sha256(await readObject(client, result.bucket, result.key))).toBe(sha256(files[i]!))
      const requests = calls.filter((call) => call.route === '')
      // Without the wait, each of the 12 asked token mode and was refused: 24 upload requests.
      expect(requests.map((call) => [call.body.strategy, call.status])).toEqual([
        ['token', 400],
        ...files.map(() => ['presigned', 200]),
      ])
    })

    it("strategy: 'token', named, is never changed: the API's sentence reaches the caller and nothing is sent presigned", async () => {
      const { api, calls } = await uploadApiFor(store())
      const failed = await upload(fileOf(testBytes(1000, 5)), { api, strategy: 'token' }).catch(
        (error: unknown) => error,
      )
      expect(failed).toBeInstanceOf(ApiError)
      expect(failed).toMatchObject({ status: 400, code: 'TokenModeUnavailable' })
      expect((failed as ApiError).message).toMatch(
        /^Token mode is not available on this server: .+ Upload with strategy 'presigned' instead$/,
      )
      expect(calls.map((call) => [call.route, call.body.strategy])).toEqual([['', 'token']])
    })
  })

  it('on RGW, files started together: the first asks token mode, the others go in token mode once it is granted; bytes exact', async () => {
    const handler = createUploadHandler(
      storeConfig(rgw, { sts: { mode: 'assume-role', roleArn: rgw.roleArn, endpoint: rgw.endpoint } }),
    )
    // Upload requests that had arrived when the first was answered.
    let arrived = 0
    let arrivedByFirstReply: number | undefined
    const { api, calls } = await serve(async (request) => {
      const isUploadRequest = new URL(request.url).pathname === '/api/s3-upload'
      if (isUploadRequest) arrived++
      const response = await handler(request)
      if (isUploadRequest) arrivedByFirstReply ??= arrived
      return response
    })
    const client = readerFor(rgw)
    const files = Array.from({ length: 6 }, (_, i) => testBytes(30_000 + i, 40 + i))
    const results = await Promise.all(files.map((bytes) => upload(fileOf(bytes), { api })))
    for (const [i, result] of results.entries())
      expect(sha256(await readObject(client, result.bucket, result.key))).toBe(sha256(files[i]!))
    const requests = calls.filter((call) => call.route === '')
    expect(requests.map((call) => [call.body.strategy, call.status])).toEqual(files.map(() => ['token', 200]))
    // Without the wait all six were in before the first STS answer came back.
    expect(arrivedByFirstReply).toBe(1)
  })

  it('headers only token mode can carry (objectHeaders) keep token mode and its refusal', async () => {
    const { api, calls, client } = await uploadApiFor(s3rver())
    const options: UploadOptions = { api, objectHeaders: { 'x-amz-meta-album': 'a' } }
    // The API was learned presigned-only by an upload before this one.
    const learned = await upload(fileOf(testBytes(10, 6)), { api })
    expect(sha256(await readObject(client, learned.bucket, learned.key))).toBe(sha256(testBytes(10, 6)))
    const failed = await upload(fileOf(testBytes(10, 7)), options).catch((error: unknown) => error)
    expect(failed).toMatchObject({ name: 'ApiError', code: 'TokenModeUnavailable' })
    expect(calls.filter((call) => call.route === '').map((call) => call.body.strategy)).toEqual([
      'token',
      'presigned',
      'token',
    ])
  })
})
