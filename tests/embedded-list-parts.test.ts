// Issue 13: the `npm start` app's embedded s3rver answers ListParts (s3rver 4.x has none), so the
// demo page can resume after a reload; only for the upload's own key, and a gone upload is
// NoSuchUpload, as S3 says.

import { createHash } from 'node:crypto'
import {
  AbortMultipartUploadCommand,
  CreateMultipartUploadCommand,
  ListPartsCommand,
  UploadPartCommand,
} from '@aws-sdk/client-s3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type EmbeddedS3, startEmbeddedS3 } from '../cli/embedded-s3.ts'
import { sdkClient } from '../dev/s3-client.ts'

let store: EmbeddedS3
let client: ReturnType<typeof sdkClient>

beforeAll(async () => {
  store = await startEmbeddedS3()
  client = sdkClient(store)
})
afterAll(async () => {
  client?.destroy()
  await store?.close()
})

describe('ListParts on the embedded store', () => {
  it('lists the parts written, with their ETags and sizes; another key or a gone upload is NoSuchUpload', async () => {
    const Bucket = store.bucket
    const Key = `resume/${crypto.randomUUID()}.bin`
    const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket, Key }))
    const bodies = [new Uint8Array(5 * 1024 * 1024).fill(1), new Uint8Array(1000).fill(2)]
    for (const [i, Body] of bodies.entries()) {
      await client.send(new UploadPartCommand({ Bucket, Key, UploadId, PartNumber: i + 1, Body }))
    }
    const listed = await client.send(new ListPartsCommand({ Bucket, Key, UploadId, MaxParts: 1000 }))
    expect(listed.Parts?.map(({ PartNumber, ETag, Size }) => ({ PartNumber, ETag, Size }))).toEqual(
      bodies.map((body, i) => ({
        PartNumber: i + 1,
        ETag: `"${createHash('md5').update(body).digest('hex')}"`,
        Size: body.length,
      })),
    )
    await expect(client.send(new ListPartsCommand({ Bucket, Key: `${Key}.other`, UploadId }))).rejects.toMatchObject({
      name: 'NoSuchUpload',
    })
    await client.send(new AbortMultipartUploadCommand({ Bucket, Key, UploadId }))
    await expect(client.send(new ListPartsCommand({ Bucket, Key, UploadId }))).rejects.toMatchObject({
      name: 'NoSuchUpload',
    })
  })
})
