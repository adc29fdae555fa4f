// End to end: the engine's upload(file, options) → the handler served over HTTP → storage, on
// s3rver and Ceph RGW. Every upload is read back with the AWS SDK and compared by sha256.
import { ListMultipartUploadsCommand, type S3Client } from '@aws-sdk/client-s3'
import { describe, expect, inject, it } from 'vitest'
import { readObject, sha256, testBytes } from '../dev/s3-client.ts'
import {
  ApiError,
  fetchTransport,
  type Transport,
  type UploadOptions,
  type UploadResult,
  upload,
} from '../engine/index.ts'
import type { PresignedMultipartReply, TokenReply } from '../protocol/wire.ts'
import type { UploadHandlerConfig } from '../server/index.ts'
import { uploadApiFixture } from './helpers/upload-api-fixture.ts'

const MiB = 1024 * 1024
const rgw = inject('rgw')
const { stores, uploadApiFor, s3rver } = uploadApiFixture()

const assumeRole = (): UploadHandlerConfig => ({
  sts: { mode: 'assume-role', roleArn: rgw.roleArn, endpoint: rgw.endpoint },
})

const fileOf = (bytes: Uint8Array<ArrayBuffer>, name: string, type = 'application/octet-stream') =>
  new File([bytes], name, { type })

/** Uploads, then reads the object back: bytes equal, and progress ended exactly at the size. */
async function uploadAndReadBack(
  client: S3Client,
  bytes: Uint8Array<ArrayBuffer>,
  options: UploadOptions,
): Promise<UploadResult> {
  const progress: Array<{ loaded: number; total: number }> = []
  const result = await upload(fileOf(bytes, 'data.bin'), { ...options, onProgress: (p) => void progress.push(p) })
  expect(sha256(await readObject(client, result.bucket, result.key))).toBe(sha256(bytes))
  expect(progress.at(-1)).toEqual({ loaded: bytes.length, total: bytes.length })
  return result
}

describe.each(Object.entries(stores))('presigned upload() to %s through the HTTP upload API', (_name, store) => {
  it('single PUT (200 kB): the upload request, the PUT, /complete; bytes exact', async () => {
    const { api, calls, client } = await uploadApiFor(store())
    const result = await uploadAndReadBack(client, testBytes(200_000, 31), { api, strategy: 'presigned' })
    expect(calls.map((call) => [call.route, call.status])).toEqual([
      ['', 200],
      ['/complete', 200],
    ])
    expect(result).toMatchObject({ bucket: store().bucket, key: (calls[0]!.reply as { key: string }).key })
  })

  it('multipart (12 MiB → 3 parts of 5 MiB): PUTs with the URLs that came in the reply, /complete, bytes exact', async () => {
    const { api, calls, client } = await uploadApiFor(store())
    const result = await uploadAndReadBack(client, testBytes(12 * MiB, 32), { api, strategy: 'presigned' })
    expect(calls.map((call) => [call.route, call.status])).toEqual([
      ['', 200],
      ['/complete', 200],
    ])
    expect(calls[0]!.reply).toMatchObject({ partSize: 5 * MiB, partCount: 3 })
    expect(result.key).toBe((calls[0]!.reply as PresignedMultipartReply).key)
  })
})

describe('token upload() to RGW (assume-role) through the HTTP upload API', () => {
  it('single PUT (200 kB) with the issued credentials, bytes exact', async () => {
    const { api, calls, client } = await uploadApiFor(rgw, assumeRole())
    const result = await uploadAndReadBack(client, testBytes(200_000, 33), { api, strategy: 'token' })
    expect(calls.map((call) => call.route)).toEqual(['', '/complete'])
    expect((calls[0]!.reply as TokenReply).token.Credentials.AccessKeyId).not.toBe(rgw.credentials.accessKeyId)
    expect(result.key).toBe((calls[0]!.reply as TokenReply).key)
  })

  it('multipart (12 MiB, partSize 5 MiB) signed in the page, bytes exact', async () => {
    const { api, calls, client } = await uploadApiFor(rgw, assumeRole())
    await uploadAndReadBack(client, testBytes(12 * MiB, 34), { api, strategy: 'token', partSize: 5 * MiB })
    // Token mode asks the upload API once, and tells it once done: the upload API created the upload
    // and completes it (createMultipart); every part is signed with the STS credentials.
    expect(calls.map((call) => call.route)).toEqual(['', '/complete'])
    expect((calls[0]!.reply as TokenReply).uploadId).toEqual(expect.any(String))
    expect(calls[1]!.body.parts).toHaveLength(3)
  })
})

describe('upload API refusals reach the caller as ApiError, message as the server wrote it', () => {
  const limits: UploadHandlerConfig = { allowedTypes: ['image/*'], maxFileSize: 1000 }

  it.each([
    [
      '415 for a type not allowed',
      fileOf(testBytes(10), 'notes.txt', 'text/plain'),
      415,
      "The type 'text/plain' is not accepted here: allowedTypes is image/*",
    ],
    [
      '413 for a file over maxFileSize',
      fileOf(testBytes(2000), 'big.png', 'image/png'),
      413,
      '2 KiB is over the 1000 B limit (filesize 2000, maxFileSize 1000 bytes)',
    ],
  ])('%s', async (_title, file, status, message) => {
    const { api, calls } = await uploadApiFor(s3rver(), limits)
    for (const strategy of ['presigned', 'token'] as const) {
      const error = await upload(file, { api, strategy }).catch((caught: unknown) => caught)
      expect(error).toBeInstanceOf(ApiError)
      expect(error).toMatchObject({ name: 'ApiError', status, message })
    }
    // Nothing but the refused requests: no URL, credential or upload was issued.
    expect(calls.map((call) => call.status)).toEqual([status, status])
  })
})

describe('abort midway on RGW leaves no multipart upload behind', () => {
  async function uploadsLeft(client: S3Client, key: string) {
    const listed = await client.send(new ListMultipartUploadsCommand({ Bucket: rgw.bucket, Prefix: key }))
    return listed.Uploads ?? []
  }

  /** 12 MiB one part at a time, aborted once the first 5 MiB part is on storage. */
  async function abortAfterFirstPart(options: UploadOptions) {
    const controller = new AbortController()
    // The rejection comes at once; the cleanup runs in the background and onCleanup says when it is over.
    let cleanedUp!: (error?: unknown) => void
    const cleanup = new Promise<unknown>((resolve) => (cleanedUp = resolve))
    const error = await upload(fileOf(testBytes(12 * MiB, 35), 'aborted.bin'), {
      ...options,
      partConcurrency: 1,
      signal: controller.signal,
      onProgress: ({ loaded }) => {
        if (loaded >= 5 * MiB) controller.abort()
      },
      onCleanup: (failure) => cleanedUp(failure),
    }).catch((caught: unknown) => caught)
    expect(error).toMatchObject({ name: 'AbortError', message: 'Upload aborted' })
    expect(await cleanup).toBeUndefined()
  }

  it('presigned: the engine calls /abort, storage lists nothing, no object exists', async () => {
    const { api, calls, client } = await uploadApiFor(rgw)
    await abortAfterFirstPart({ api, strategy: 'presigned' })
    expect(calls.map((call) => [call.route, call.status])).toEqual([
      ['', 200],
      ['/abort', 200],
    ])
    const started = calls[0]!.reply as PresignedMultipartReply
    expect(calls[1]!.body).toEqual({ ticket: started.ticket })
    expect(await uploadsLeft(client, started.key)).toEqual([])
    await expect(readObject(client, started.bucket, started.key)).rejects.toMatchObject({ name: 'NoSuchKey' })
  })

  it('token: AbortMultipartUpload with the scoped credentials (the policy allows it), nothing left', async () => {
    const { api, calls, client } = await uploadApiFor(rgw, assumeRole())
    const sent: string[] = []
    // The upload API's calls go through the transport too; only storage's are listed here.
    const transport: Transport = async (request) => {
      const response = await fetchTransport(request)
      if (request.url.startsWith(rgw.endpoint)) sent.push(`${request.method} ${response.status}`)
      return response
    }
    await abortAfterFirstPart({ api, strategy: 'token', partSize: 5 * MiB, transport })
    // The upload API created the upload (createMultipart); part 1, then AbortMultipartUpload
    // answered 204: the scoped credentials may abort an upload the server's key created.
    expect(sent).toEqual(['PUT 200', 'DELETE 204'])
    const issued = calls[0]!.reply as TokenReply
    expect(issued.uploadId).toEqual(expect.any(String))
    expect(await uploadsLeft(client, issued.key)).toEqual([])
    await expect(readObject(client, issued.bucket, issued.key)).rejects.toMatchObject({ name: 'NoSuchKey' })
  })
})
