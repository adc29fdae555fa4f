// The checksum opt-in in real Chromium, cross-origin to Ceph RGW: the page hashes each part
// (CRC32C, MD5, SHA-256 through WebCrypto), the headers pass the bucket's CORS preflight, and the
// object reads back byte-exact.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import type * as Engine from '../engine/index.ts'
import { openEnginePage, type EnginePage } from './helpers/engine-page.ts'
import { readObject, sdkClient, sha256 } from './helpers/s3-client.ts'

const rgw = inject('rgw')
const admin = sdkClient(rgw)
let engine: EnginePage

beforeAll(async () => {
  engine = await openEnginePage()
})
afterAll(async () => {
  await engine?.close()
  admin.destroy()
})

interface Job {
  target: { endpoint: string; region: string; bucket: string; key: string; credentials: Engine.Credentials }
  size: number
  algorithm: Engine.ChecksumAlgorithm
}

const uploadInPage = (job: Job) =>
  engine.page.evaluate(async ({ target, size, algorithm }: Job) => {
    const { updraft } = window as unknown as { updraft: typeof Engine }
    const bytes = new Uint8Array(size)
    for (let i = 0; i < size; i += 65536) crypto.getRandomValues(bytes.subarray(i, i + 65536))
    const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes))
    const headers: string[] = []
    const { setRequestHeader } = XMLHttpRequest.prototype
    XMLHttpRequest.prototype.setRequestHeader = function (this: XMLHttpRequest, name: string, value: string) {
      headers.push(name)
      return setRequestHeader.call(this, name, value)
    }
    try {
      await updraft.uploadObject(new Blob([bytes]), { ...target, forcePathStyle: true, ...updraft.checksum(algorithm) })
      return { sha256: Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join(''), headers }
    } catch (error) {
      return { error: `${(error as Error).name}: ${(error as Error).message}`, headers }
    } finally {
      XMLHttpRequest.prototype.setRequestHeader = setRequestHeader
    }
  }, job)

describe('checksums in Chromium, cross-origin to Ceph RGW', () => {
  for (const algorithm of ['md5', 'crc32c', 'sha256'] as const) {
    it(`${algorithm}: single PUT and multipart (11 MiB, 5 MiB parts) read back byte-exact`, async () => {
      for (const size of [70_001, 11 * 1024 * 1024]) {
        const key = `browser-checksums/${algorithm}-${size}-${randomUUID()}.bin`
        const target = { endpoint: rgw.endpoint, region: rgw.region, bucket: rgw.bucket, key, credentials: rgw.credentials }
        const outcome = await uploadInPage({ target, size, algorithm })
        expect(outcome.error).toBeUndefined()
        expect(outcome.headers).toContain(algorithm === 'md5' ? 'content-md5' : `x-amz-checksum-${algorithm}`)
        expect(outcome.headers).not.toContain('x-amz-sdk-checksum-algorithm')
        expect(sha256(await readObject(admin, rgw.bucket, key))).toBe(outcome.sha256)
      }
    })
  }
})
