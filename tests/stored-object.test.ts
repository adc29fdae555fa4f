// What /complete reads of an object, in one storage request (server/stored-object.ts), held to each
// store's own HEAD on s3rver, Ceph RGW and Swift: size, type, ETag, the headers a page may have
// added, the first bytes; empty objects (RGW and Swift answer a range with 416, s3rver with a 206
// whose byte never comes) and a missing one. Requests are counted at a proxy in front of the store.
import {
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  HeadObjectCommand,
  PutObjectCommand,
  type S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { startCountingProxy } from '../dev/counting-proxy.ts'
import { sdkClient, testBytes } from '../dev/s3-client.ts'
import { type S3rverInstance, startS3rver } from '../dev/s3rver.ts'
import type { TestStore } from '../dev/stores.ts'
import { MIN_PART_SIZE, SIGNATURE_BYTES } from '../protocol/limits.ts'
import { readStoredObject } from '../server/stored-object.ts'

let s3rver: S3rverInstance
const stores: Record<string, () => TestStore> = {
  s3rver: () => s3rver,
  rgw: () => inject('rgw'),
  swift: () => inject('swift'),
}
beforeAll(async () => {
  s3rver = await startS3rver()
})
afterAll(() => s3rver?.stop())

/** Headers a page can add that every one of the three stores keeps (Swift has no tagging or website redirects). */
const EXTRAS = {
  ContentEncoding: 'gzip',
  ContentDisposition: 'inline',
  ContentLanguage: 'xx',
  Metadata: { owner: 'mallory' },
}

describe.each(Object.entries(stores))('on %s', (_name, store) => {
  let proxy: Awaited<ReturnType<typeof startCountingProxy>>
  let direct: S3Client
  let proxied: S3Client
  beforeAll(async () => {
    proxy = await startCountingProxy(store().endpoint)
    direct = sdkClient(store())
    proxied = sdkClient({ ...store(), endpoint: proxy.endpoint })
  })
  afterAll(async () => {
    direct.destroy()
    proxied.destroy()
    await proxy.stop()
  })

  /** readStoredObject through the proxy, with the storage requests it made. */
  async function read(key: string, declaredSize: number | undefined, firstBytes = true) {
    const before = proxy.log.length
    const stored = await readStoredObject(proxied, { bucket: store().bucket, key, firstBytes, declaredSize })
    return { stored, requests: proxy.log.slice(before).map((entry) => `${entry.method} ${entry.status}`) }
  }

  async function put(bytes: Uint8Array, extra: object = EXTRAS) {
    const key = `stored-object/${crypto.randomUUID()}.png`
    await direct.send(
      new PutObjectCommand({ Bucket: store().bucket, Key: key, Body: bytes, ContentType: 'image/png', ...extra }),
    )
    return { key, head: await direct.send(new HeadObjectCommand({ Bucket: store().bucket, Key: key })) }
  }

  it.each([1, 5, SIGNATURE_BYTES, SIGNATURE_BYTES + 1, 100_000])(
    '%i bytes: one ranged GET says what HEAD says, and gives the first bytes',
    async (size) => {
      const bytes = testBytes(size, size)
      const { key, head } = await put(bytes)
      const { stored, requests } = await read(key, size)
      expect(requests).toEqual(['GET 206'])
      expect(stored).toMatchObject({ size, contentType: 'image/png', etag: head.ETag, lastModified: head.LastModified })
      expect(stored.firstBytes).toEqual(bytes.subarray(0, SIGNATURE_BYTES))
      const { ContentEncoding, ContentDisposition, ContentLanguage, Metadata, TagCount } = stored.headers
      expect({ ContentEncoding, ContentDisposition, ContentLanguage, Metadata, TagCount }).toEqual({
        ContentEncoding: head.ContentEncoding,
        ContentDisposition: head.ContentDisposition,
        ContentLanguage: head.ContentLanguage,
        Metadata: head.Metadata,
        TagCount: head.TagCount,
      })
      expect(Metadata).toEqual({ owner: 'mallory' })
    },
  )

  it('a multipart object: its whole size from Content-Range, the multipart ETag', async () => {
    const key = `stored-object/${crypto.randomUUID()}.bin`
    const bytes = testBytes(MIN_PART_SIZE + 7, 3)
    const { UploadId } = await direct.send(
      new CreateMultipartUploadCommand({ Bucket: store().bucket, Key: key, ContentType: 'image/png' }),
    )
    const parts = []
    for (const [index, body] of [bytes.subarray(0, MIN_PART_SIZE), bytes.subarray(MIN_PART_SIZE)].entries()) {
      const { ETag } = await direct.send(
        new UploadPartCommand({ Bucket: store().bucket, Key: key, UploadId, PartNumber: index + 1, Body: body }),
      )
      parts.push({ PartNumber: index + 1, ETag })
    }
    await direct.send(
      new CompleteMultipartUploadCommand({
        Bucket: store().bucket,
        Key: key,
        UploadId,
        MultipartUpload: { Parts: parts },
      }),
    )
    const head = await direct.send(new HeadObjectCommand({ Bucket: store().bucket, Key: key }))
    const { stored, requests } = await read(key, bytes.length)
    expect(requests).toEqual(['GET 206'])
    expect(stored).toMatchObject({ size: bytes.length, etag: head.ETag })
    expect(stored.firstBytes).toEqual(bytes.subarray(0, SIGNATURE_BYTES))
  })

  it('without a signature to check: one HEAD', async () => {
    const { key, head } = await put(testBytes(100, 1))
    const { stored, requests } = await read(key, 100, false)
    expect(requests).toEqual(['HEAD 200'])
    expect(stored).toMatchObject({ size: 100, etag: head.ETag, firstBytes: undefined })
  })

  it('declared empty and empty: one HEAD, no bytes', async () => {
    const { key } = await put(new Uint8Array(), {})
    const { stored, requests } = await read(key, 0)
    expect(requests).toEqual(['HEAD 200'])
    expect(stored).toMatchObject({ size: 0, contentType: 'image/png', firstBytes: new Uint8Array() })
  })

  it('declared 5 bytes, stored empty (a lie): its size is known whatever the store answers a range of nothing', async () => {
    const { key } = await put(new Uint8Array(), {})
    const { stored, requests } = await read(key, 5)
    // RGW and Swift: 416 InvalidRange, then the HEAD; s3rver: 206 `bytes 0-0/0`, and its byte is never waited for.
    expect(requests).toEqual(store().name === 's3rver' ? ['GET 206'] : ['GET 416', 'HEAD 200'])
    expect(stored).toMatchObject({ size: 0, contentType: 'image/png', firstBytes: new Uint8Array() })
  })

  it('no object: the 404 as the SDK throws it, after one request', async () => {
    const before = proxy.log.length
    const error = await readStoredObject(proxied, {
      bucket: store().bucket,
      key: `stored-object/${crypto.randomUUID()}`,
      firstBytes: true,
      declaredSize: 5,
    }).catch((e: unknown) => e)
    expect(error).toMatchObject({ $metadata: { httpStatusCode: 404 } })
    expect(proxy.log.slice(before).map((entry) => `${entry.method} ${entry.status}`)).toEqual(['GET 404'])
  })
})
