// SSE-C through `upload()` in token mode, against Ceph RGW with its STS. `/complete` HEADs the
// object to check it; storage describes an object written with a customer key only to a request
// carrying that key, and the upload API never holds it (sending it there would make the app server a
// holder of every page's key). It used to answer that 400 with a 500: the page retried, then
// rejected, `onUploadComplete` never ran, and the object stayed in the bucket, unrecorded. Now
// `upload()` refuses the combination before the API is asked (a TypeError naming `uploadObject`),
// and a page that writes such an object anyway is refused at /complete (422) and the object
// deleted, single and multipart. `uploadObject` with SSE-C and the issued credentials still lands.
// ~3 s: three uploads of up to 11 MiB.
import { GetObjectCommand, HeadObjectCommand } from '@aws-sdk/client-s3'
import { afterAll, describe, expect, inject, it } from 'vitest'
import { sdkClient, sha256, testBytes } from '../dev/s3-client.ts'
import { recordCalls, type ServedHandler, serveHandler } from '../dev/serve-handler.ts'
import { directTarget, storeConfig } from '../dev/stores.ts'
import { upload, uploadObject } from '../engine/index.ts'
import { sseCustomerKey } from '../engine/opt-ins/sse-c.ts'
import type { TokenReply } from '../protocol/wire.ts'
import { createUploadHandler } from '../server/index.ts'

const MiB = 1024 * 1024
const rgw = inject('rgw')
const admin = sdkClient(rgw)
const KEY = Uint8Array.from({ length: 32 }, (_, i) => (i * 11 + 5) & 0xff)
const served: ServedHandler[] = []
afterAll(async () => {
  admin.destroy()
  await Promise.all(served.map((server) => server.close()))
})

async function uploadApi() {
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
  return { api: server.api, calls: recorded.calls, completed }
}

const statusOf = (key: string, withKey: boolean) =>
  admin
    .send(
      new HeadObjectCommand({
        Bucket: rgw.bucket,
        Key: key,
        ...(withKey && { SSECustomerAlgorithm: 'AES256', SSECustomerKey: KEY as unknown as string }),
      }),
    )
    .then(
      () => 200,
      (error: { $metadata?: { httpStatusCode?: number } }) => error.$metadata?.httpStatusCode,
    )

/** Token credentials for one key, as the upload API issues them to a page. */
async function issued(api: string, size: number) {
  const response = await fetch(api, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      filename: 'secret.bin',
      filetype: 'application/octet-stream',
      filesize: size,
      strategy: 'token',
    }),
  })
  const reply = (await response.json()) as TokenReply
  const { AccessKeyId, SecretAccessKey, SessionToken } = reply.token.Credentials
  return {
    reply,
    credentials: { accessKeyId: AccessKeyId, secretAccessKey: SecretAccessKey, sessionToken: SessionToken },
  }
}

describe('upload() with sseCustomerKey', () => {
  it('is refused before the upload API is asked: a TypeError naming uploadObject, nothing sent', async () => {
    const { api, calls } = await uploadApi()
    const refused = upload(new Blob([testBytes(70_000, 61)], { type: 'application/octet-stream' }), {
      api,
      ...sseCustomerKey(KEY),
    })
    await expect(refused).rejects.toThrow(
      new TypeError(
        'updraft: sseCustomerKey needs uploadObject(): the upload API cannot check an object encrypted with your key',
      ),
    )
    expect(calls).toEqual([])
  })
})

describe('a page that writes an SSE-C object anyway, then asks /complete, on Ceph RGW', () => {
  it.each([
    ['a single PUT (70 KB)', 70_000],
    ['multipart (11 MiB)', 11 * MiB],
  ])(
    '%s: refused at /complete with what to use instead, the object deleted, onUploadComplete never called',
    async (_what, size) => {
      const { api, calls, completed } = await uploadApi()
      const { reply, credentials } = await issued(api, size)
      await uploadObject(new Blob([testBytes(size, 61)]), {
        ...directTarget(rgw, reply.key, { credentials }),
        contentType: 'application/octet-stream',
        ...sseCustomerKey(KEY),
      })
      expect(await statusOf(reply.key, true)).toBe(200)
      const response = await fetch(`${api}/complete`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ticket: reply.ticket }),
      })
      expect(response.status).toBe(422)
      expect(((await response.json()) as { error: string }).error).toMatch(
        /refused and deleted: storage describes it only to a request carrying its customer key \(SSE-C\).*uploadObject/,
      )
      expect(calls.map((call) => [call.route, call.status])).toEqual([
        ['', 200],
        ['/complete', 422],
      ])
      expect(await statusOf(reply.key, true)).toBe(404)
      expect(completed).toEqual([])
    },
  )
})

describe('uploadObject with sseCustomerKey and the upload API’s token credentials: the way named', () => {
  it('lands, and reads back byte-exact with the key', async () => {
    const { api } = await uploadApi()
    const bytes = testBytes(70_000, 62)
    const { reply, credentials } = await issued(api, bytes.length)
    await uploadObject(new Blob([bytes]), { ...directTarget(rgw, reply.key, { credentials }), ...sseCustomerKey(KEY) })
    const read = await admin.send(
      new GetObjectCommand({
        Bucket: rgw.bucket,
        Key: reply.key,
        SSECustomerAlgorithm: 'AES256',
        SSECustomerKey: KEY as unknown as string,
      }),
    )
    expect(sha256(await read.Body!.transformToByteArray())).toBe(sha256(bytes))
  })
})
