import { DeleteObjectCommand } from '@aws-sdk/client-s3'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { startCountingProxy } from '../dev/counting-proxy.ts'
import { readObject, sdkClient, sha256, testBytes } from '../dev/s3-client.ts'
import { startS3rver } from '../dev/s3rver.ts'
import type { TestStore } from '../dev/stores.ts'
import { uploadObject } from '../engine/index.ts'
import { MIN_PART_SIZE, MiB } from '../protocol/limits.ts'

const SIZES = {
  '0 B': 0,
  '1 B': 1,
  '5 MiB - 1': MIN_PART_SIZE - 1,
  '5 MiB': MIN_PART_SIZE,
  '5 MiB + 1': MIN_PART_SIZE + 1,
  '3 parts + 1 B': 3 * MIN_PART_SIZE + 1,
  '~64 MiB': 64 * MiB + 12345,
}

// The largest body once, sliced for the smaller sizes: each still has distinct content per part.
const bytes = testBytes(Math.max(...Object.values(SIZES)), 7)
let s3rver: Awaited<ReturnType<typeof startS3rver>>
const stores: Record<string, () => TestStore> = {
  s3rver: () => s3rver,
  rgw: () => inject('rgw'),
  swift: () => inject('swift'),
}

beforeAll(async () => {
  s3rver = await startS3rver()
})
afterAll(() => s3rver?.stop())

describe.each(Object.keys(stores))('byte-exact round trips on %s', (storeName) => {
  let proxy: Awaited<ReturnType<typeof startCountingProxy>>
  let store: TestStore
  beforeAll(async () => {
    store = stores[storeName]!()
    proxy = await startCountingProxy(store.endpoint)
  })
  afterAll(() => proxy?.stop())

  describe.each([1, 4])('queueSize %i', (queueSize) => {
    it.each(Object.entries(SIZES))('uploads %s and reads back the same bytes', async (label, size) => {
      const data = bytes.subarray(0, size)
      const key = `roundtrip/${queueSize}/${label.replace(/\W+/g, '-')}-${crypto.randomUUID()}.bin`
      const progress: number[] = []
      const parts = size > MIN_PART_SIZE ? Math.ceil(size / MIN_PART_SIZE) : 0
      proxy.reset(Math.min(queueSize, parts))
      const result = await uploadObject(new Blob([data], { type: 'application/octet-stream' }), {
        bucket: store.bucket,
        key,
        region: store.region,
        endpoint: proxy.endpoint,
        forcePathStyle: true,
        credentials: store.credentials,
        partConcurrency: queueSize,
        onProgress: ({ loaded, total }) => {
          expect(total).toBe(size)
          progress.push(loaded)
        },
      })
      expect(result).toMatchObject({ bucket: store.bucket, key })

      const client = sdkClient(store)
      expect(sha256(await readObject(client, store.bucket, key))).toBe(sha256(data))
      await client.send(new DeleteObjectCommand({ Bucket: store.bucket, Key: key }))

      expect(progress.at(-1)).toBe(size)
      expect(progress).toEqual([...progress].sort((a, b) => a - b))
      expect(proxy.stats.partRequests).toBe(parts)
      if (parts) expect(proxy.stats.peakPartsInFlight).toBe(Math.min(queueSize, parts))
    })
  })
})

// Regression: an IP-address endpoint without forcePathStyle became a virtual host
// (`http://uploads.127.0.0.1:PORT/…`), which resolves nowhere; S3's endpoint rules send it path-style.
describe.each(Object.keys(stores))('an IP-address endpoint on %s without forcePathStyle', (storeName) => {
  it('goes path-style, single and multipart, byte-exact', async () => {
    const store = stores[storeName]!()
    expect(new URL(store.endpoint).hostname).toBe('127.0.0.1')
    const client = sdkClient(store)
    for (const size of [1000, MIN_PART_SIZE + 1]) {
      const data = bytes.subarray(0, size)
      const key = `roundtrip/ip-endpoint/${size}-${crypto.randomUUID()}.bin`
      const result = await uploadObject(new Blob([data]), {
        bucket: store.bucket,
        key,
        region: store.region,
        endpoint: store.endpoint,
        credentials: store.credentials,
      })
      expect(result.url).toBe(`${store.endpoint}/${store.bucket}/${key}`)
      expect(sha256(await readObject(client, store.bucket, key))).toBe(sha256(data))
      await client.send(new DeleteObjectCommand({ Bucket: store.bucket, Key: key }))
    }
  })
})
