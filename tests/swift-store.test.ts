// OpenStack Swift's S3 API (Debian 2.30, the s3api middleware) as the third store: the engine's
// uploads with its own keys (single, multipart, abort with nothing left, resume through ListParts)
// and the upload API in presigned mode, every object read back byte-exact. Where Swift differs from
// S3 the test says so in its name. The round trips of every size also run on Swift
// (engine-roundtrip.test.ts), and so do the upload API's presigned steps (server-presigned.test.ts).
import {
  ListMultipartUploadsCommand,
  ListPartsCommand,
  PutBucketCorsCommand,
  PutObjectCommand,
} from '@aws-sdk/client-s3'
import { afterAll, describe, expect, inject, it } from 'vitest'
import { readObject, sdkClient, sha256, testBytes } from '../dev/s3-client.ts'
import { recordCalls, serveHandler } from '../dev/serve-handler.ts'
import { directTarget, storeConfig } from '../dev/stores.ts'
import { PauseController, resumeUploads, S3Error, upload, uploadObject } from '../engine/index.ts'
import { memoryResumeStore } from '../engine/resume/resume-store.ts'
import { MIN_PART_SIZE, MiB } from '../protocol/limits.ts'
import { createUploadHandler } from '../server/index.ts'

const swift = inject('swift')
const client = sdkClient(swift)
const servers: Array<{ close(): unknown }> = []
afterAll(async () => {
  client.destroy()
  await Promise.all(servers.map((server) => server.close()))
})

const uploadsLeftFor = async (key: string) => {
  const listed = await client.send(new ListMultipartUploadsCommand({ Bucket: swift.bucket, Prefix: key }))
  return (listed.Uploads ?? []).filter((open) => open.Key === key)
}

async function uploadApi(extra = {}) {
  const recorded = recordCalls(createUploadHandler(storeConfig(swift, extra)))
  const server = await serveHandler(recorded.handler)
  servers.push(server)
  return { api: server.api, calls: recorded.calls }
}

describe('the engine with its own keys, on Swift', () => {
  it('a single PutObject (1 MiB + 3 B) reads back byte-exact, with an MD5 ETag', async () => {
    const bytes = testBytes(MiB + 3, 41)
    const key = `swift/single-${crypto.randomUUID()}.bin`
    const result = await uploadObject(new Blob([bytes]), directTarget(swift, key))
    expect(result.url).toBe(`${swift.endpoint}/${swift.bucket}/${key}`)
    expect(result.etag).toMatch(/^"[0-9a-f]{32}"$/)
    expect(sha256(await readObject(client, swift.bucket, key))).toBe(sha256(bytes))
  })

  it('multipart (3 parts + 1 B, 2 in flight) reads back byte-exact and leaves no upload open', async () => {
    const bytes = testBytes(3 * MIN_PART_SIZE + 1, 42)
    const key = `swift/multipart-${crypto.randomUUID()}.bin`
    const progress: number[] = []
    const result = await uploadObject(new Blob([bytes]), {
      ...directTarget(swift, key),
      partConcurrency: 2,
      onProgress: ({ loaded }) => void progress.push(loaded),
    })
    expect(result.etag).toMatch(/-4"$/) // S3-style multipart ETag: md5 of the part MD5s, then the count
    expect(progress.at(-1)).toBe(bytes.length)
    expect(sha256(await readObject(client, swift.bucket, key))).toBe(sha256(bytes))
    expect(await uploadsLeftFor(key)).toEqual([])
  })

  it('aborting midway rejects with AbortError and leaves no multipart upload and no object', async () => {
    const key = `swift/abort-${crypto.randomUUID()}.bin`
    const controller = new AbortController()
    let cleanedUp!: () => void
    const cleanup = new Promise<void>((resolve) => (cleanedUp = resolve))
    const error = await uploadObject(new Blob([testBytes(4 * MIN_PART_SIZE, 43)]), {
      ...directTarget(swift, key),
      partConcurrency: 2,
      signal: controller.signal,
      onProgress: ({ loaded }) => loaded >= MIN_PART_SIZE && controller.abort(),
      onCleanup: () => cleanedUp(),
    }).catch((e: unknown) => e)
    await cleanup
    expect(error).toMatchObject({ name: 'AbortError', message: 'Upload aborted' })
    expect(await uploadsLeftFor(key)).toEqual([])
    await expect(readObject(client, swift.bucket, key)).rejects.toMatchObject({ name: 'NoSuchKey' })
  })

  it('a wrong secret fails with S3Error SignatureDoesNotMatch 403 (as AWS; RGW says AccessDenied), nothing written', async () => {
    const key = `swift/denied-${crypto.randomUUID()}.bin`
    const error = await uploadObject(new Blob(['hello']), {
      ...directTarget(swift, key),
      credentials: { ...swift.credentials, secretAccessKey: 'not-the-secret' },
    }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(S3Error)
    expect(error).toMatchObject({ code: 'SignatureDoesNotMatch', status: 403 })
    await expect(readObject(client, swift.bucket, key)).rejects.toMatchObject({ name: 'NoSuchKey' })
  })
})

describe('the upload API in presigned mode, on Swift', () => {
  it('single PUT (200 kB) and multipart (12 MiB → 3 parts): the engine through the upload API, byte-exact', async () => {
    const { api, calls } = await uploadApi()
    for (const [size, seed] of [
      [200_000, 44],
      [12 * MiB, 45],
    ] as const) {
      const bytes = testBytes(size, seed)
      calls.length = 0
      const result = await upload(new File([bytes], 'data.bin'), { api, strategy: 'presigned' })
      expect(calls.map((call) => [call.route, call.status])).toEqual([
        ['', 200],
        ['/complete', 200],
      ])
      expect(sha256(await readObject(client, result.bucket, result.key))).toBe(sha256(bytes))
    }
  })

  it('resume through ListParts: a page that left after 2 parts is carried on by the next, only the missing parts sent, byte-exact', async () => {
    const { api, calls } = await uploadApi({ resumable: true })
    const store = memoryResumeStore()
    const bytes = testBytes(4 * MIN_PART_SIZE + 999, 46)
    const file = () => new File([bytes], 'resumed.bin', { lastModified: 1_700_000_000_000 })
    // The first page: paused for good once two parts are out, as a closed tab leaves it.
    const pauses = new PauseController()
    let gone!: () => void
    const left = new Promise<void>((resolve) => (gone = resolve))
    void upload(file(), {
      api,
      strategy: 'presigned',
      resume: resumeUploads({ store }),
      partConcurrency: 1,
      pauseSignal: pauses.signal,
      onProgress: ({ loaded }) => {
        if (loaded >= 2 * MIN_PART_SIZE && !pauses.signal.paused) {
          pauses.pause()
          gone()
        }
      },
    }).catch(() => {})
    await left
    await new Promise((resolve) => setTimeout(resolve, 300))
    const [record] = await store.list()
    expect(record).toBeDefined()
    const listed = await client.send(
      new ListPartsCommand({ Bucket: record!.bucket, Key: record!.key, UploadId: record!.uploadId }),
    )
    const kept = (listed.Parts ?? []).map((part) => part.PartNumber!)
    expect(kept.length).toBeGreaterThanOrEqual(1)
    expect(kept.length).toBeLessThan(5)

    calls.length = 0
    const result = await upload(file(), { api, strategy: 'presigned', resume: resumeUploads({ store }) })
    expect(result.key).toBe(record!.key)
    expect(sha256(await readObject(client, swift.bucket, result.key))).toBe(sha256(bytes))
    // The second page listed the parts through the upload API and asked URLs only for the others.
    expect(calls.map((call) => call.route)).toContain('/list-parts')
    expect(calls.some((call) => call.route === '')).toBe(false)
    const asked = calls
      .filter((call) => call.route === '/parts')
      .flatMap((call) => (call.body as { partNumbers: number[] }).partNumbers)
    expect(asked.sort()).toEqual([1, 2, 3, 4, 5].filter((n) => !kept.includes(n)))
    expect(await store.list()).toEqual([])
  })
})

describe('where Swift differs from S3', () => {
  it('PutBucketCors answers 501 NotImplemented: CORS is set in the proxy config, not through the S3 API', async () => {
    await expect(
      client.send(
        new PutBucketCorsCommand({
          Bucket: swift.bucket,
          CORSConfiguration: { CORSRules: [{ AllowedOrigins: ['*'], AllowedMethods: ['PUT'] }] },
        }),
      ),
    ).rejects.toMatchObject({ name: 'NotImplemented', $metadata: { httpStatusCode: 501 } })
  })

  it('an error reply carries no CORS headers, where a success does (a browser sees only a network error)', async () => {
    const origin = 'http://page.test'
    // A refused signature: the presigned URL with one character of its signature changed.
    const refused = await presignedPut(swift.bucket, origin, (url) =>
      url.replace(/(X-Amz-Signature=)(.)/, (_, name, c) => name + (c === '0' ? '1' : '0')),
    )
    expect(refused.status).toBe(403)
    expect(await refused.text()).toContain('<Code>SignatureDoesNotMatch</Code>')
    expect(refused.headers.get('access-control-allow-origin')).toBeNull()
    // The same origin on the PUT as signed gets it, and ETag is exposed.
    const put = await presignedPut(swift.bucket, origin)
    expect(put.status).toBe(200)
    expect(put.headers.get('access-control-allow-origin')).toBeTruthy()
    expect(put.headers.get('access-control-expose-headers')?.toLowerCase()).toContain('etag')
  })

  it('x-amz-checksum-* values are not verified: a wrong CRC32 is stored without complaint (AWS would answer BadDigest)', async () => {
    const key = `swift/checksum-${crypto.randomUUID()}.bin`
    const bytes = testBytes(1000, 47)
    await client.send(new PutObjectCommand({ Bucket: swift.bucket, Key: key, Body: bytes, ChecksumCRC32: 'AAAAAA==' }))
    expect(sha256(await readObject(client, swift.bucket, key))).toBe(sha256(bytes))
  })

  it('Content-MD5 is verified: a wrong one is refused with BadDigest, nothing stored', async () => {
    const key = `swift/md5-${crypto.randomUUID()}.bin`
    await expect(
      client.send(
        new PutObjectCommand({
          Bucket: swift.bucket,
          Key: key,
          Body: testBytes(1000, 48),
          ContentMD5: '1B2M2Y8AsgTpgAmY7PhCfg==',
        }),
      ),
    ).rejects.toMatchObject({ name: 'BadDigest' })
    await expect(readObject(client, swift.bucket, key)).rejects.toMatchObject({ name: 'NoSuchKey' })
  })

  it('no bucket can hide ETag from an allowed origin: a PUT to the no-expose bucket exposes it too', async () => {
    const put = await presignedPut(swift.bucketWithoutExposedETag, 'http://page.test')
    expect(put.status).toBe(200)
    expect(put.headers.get('access-control-expose-headers')?.toLowerCase()).toContain('etag')
  })
})

/** A 2-byte PUT with the URL the upload API presigned for `bucket`, sent with an Origin as a page would. */
async function presignedPut(bucket: string, origin: string, alter = (url: string) => url) {
  const { api } = await uploadApi({ bucket })
  const reply = await fetch(api, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ filename: 'c.txt', filetype: 'text/plain', filesize: 2, strategy: 'presigned' }),
  })
  const started = (await reply.json()) as { url: string; headers?: Record<string, string> }
  return fetch(alter(started.url), { method: 'PUT', body: 'ok', headers: { ...started.headers, origin } })
}
