// SSE-C through `upload()` in token mode, against Ceph RGW with its STS. `/complete` HEADs the
// object to check it; storage describes an object written with a customer key only to a request
// carrying that key, and the endpoint never holds it (sending it there would make the app server a
// holder of every page's key). It used to answer that 400 with a 500: the page retried, then
// rejected, `onUploadComplete` never ran, and the object stayed in the bucket, unrecorded. Now the
// combination is refused with a sentence naming what to use (`uploadObject`), and the object is
// deleted, single and multipart. `uploadObject` with SSE-C and the issued credentials still lands.
// ~3 s: three uploads of up to 11 MiB.
import { GetObjectCommand, HeadObjectCommand } from '@aws-sdk/client-s3'
import { afterAll, describe, expect, inject, it } from 'vitest'
import { ApiError, upload, uploadObject } from '../engine/index.ts'
import { sseCustomerKey } from '../engine/opt-ins/sse-c.ts'
import type { TokenReply } from '../protocol/wire.ts'
import { createUploadHandler } from '../server/index.ts'
import { sdkClient, sha256, testBytes } from './helpers/s3-client.ts'
import { recordCalls, serveHandler, type ServedHandler } from './helpers/serve-handler.ts'
import { directTarget, storeConfig } from './helpers/stores.ts'

const MiB = 1024 * 1024
const rgw = inject('rgw')
const admin = sdkClient(rgw)
const KEY = Uint8Array.from({ length: 32 }, (_, i) => (i * 11 + 5) & 0xff)
const served: ServedHandler[] = []
afterAll(async () => {
  admin.destroy()
  await Promise.all(served.map((server) => server.close()))
})

async function endpoint() {
  const completed: string[] = []
  const recorded = recordCalls(
    createUploadHandler(
      storeConfig(rgw, {
        sts: { mode: 'assume-role', roleArn: rgw.roleArn },
        onUploadComplete: ({ key }) => void completed.push(key),
        logger: { error: () => {}, warn: () => {} },
      }),
    ),
  )
  const server = await serveHandler(recorded.handler)
  served.push(server)
  return { api: server.endpoint, calls: recorded.calls, completed }
}

const statusOf = (key: string, withKey: boolean) =>
  admin
    .send(new HeadObjectCommand({ Bucket: rgw.bucket, Key: key, ...(withKey && { SSECustomerAlgorithm: 'AES256', SSECustomerKey: KEY as unknown as string }) }))
    .then(
      () => 200,
      (error: { $metadata?: { httpStatusCode?: number } }) => error.$metadata?.httpStatusCode,
    )

describe('upload() in token mode with sseCustomerKey, on Ceph RGW', () => {
  it.each([
    ['a single PUT (70 KB)', 70_000],
    ['multipart (11 MiB)', 11 * MiB],
  ])('%s: refused at /complete with what to use instead, the object deleted, onUploadComplete never called', async (_what, size) => {
    const { api, calls, completed } = await endpoint()
    const error = await upload(new Blob([testBytes(size, 61)], { type: 'application/octet-stream' }), {
      api,
      strategy: 'token',
      ...sseCustomerKey(KEY),
    }).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(ApiError)
    expect(error).toMatchObject({
      status: 422,
      message: expect.stringMatching(/refused and deleted: storage describes it only to a request carrying its customer key \(SSE-C\).*uploadObject/),
    })
    // Final, not retried: one /complete.
    expect(calls.map((call) => [call.route, call.status])).toEqual([
      ['', 200],
      ['/complete', 422],
    ])
    const { key } = calls[0]!.reply as TokenReply
    expect(await statusOf(key, true)).toBe(404)
    expect(completed).toEqual([])
  })
})

describe('uploadObject with sseCustomerKey and the endpoint’s token credentials: the way named', () => {
  it('lands, and reads back byte-exact with the key', async () => {
    const { api } = await endpoint()
    const bytes = testBytes(70_000, 62)
    const response = await fetch(api, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ filename: 'secret.bin', filetype: 'application/octet-stream', filesize: bytes.length, strategy: 'token' }),
    })
    const reply = (await response.json()) as TokenReply
    const { AccessKeyId, SecretAccessKey, SessionToken } = reply.token.Credentials
    await uploadObject(new Blob([bytes]), {
      ...directTarget(rgw, reply.key, { credentials: { accessKeyId: AccessKeyId, secretAccessKey: SecretAccessKey, sessionToken: SessionToken } }),
      ...sseCustomerKey(KEY),
    })
    const read = await admin.send(new GetObjectCommand({ Bucket: rgw.bucket, Key: reply.key, SSECustomerAlgorithm: 'AES256', SSECustomerKey: KEY as unknown as string }))
    expect(sha256(await read.Body!.transformToByteArray())).toBe(sha256(bytes))
  })
})
