// The checksum opt-in (updraft-s3/checksums) for real against Ceph RGW 16.2: what it verifies, what
// it ignores, and that every upload reads back byte-exact.

import { createHash } from 'node:crypto'
import { crc32 } from 'node:zlib'
import { GetObjectCommand, HeadObjectCommand, ListMultipartUploadsCommand } from '@aws-sdk/client-s3'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { type Fault, startFaultProxy } from '../dev/fault-proxy.ts'
import { readObject, sdkClient, sha256, testBytes } from '../dev/s3-client.ts'
import { type S3rverInstance, startS3rver } from '../dev/s3rver.ts'
import { serveHandler } from '../dev/serve-handler.ts'
import { directTarget, storeConfig } from '../dev/stores.ts'
import {
  fetchTransport,
  type HttpRequest,
  type ObjectTarget,
  S3Error,
  type Transport,
  UploadError,
  upload,
  uploadObject,
} from '../engine/index.ts'
import { CRC32C, crc } from '../engine/opt-ins/checksums/crc.ts'
import { checksum } from '../engine/opt-ins/checksums/index.ts'
import { uploadPresigned } from '../engine/presigned.ts'
import type { ChecksumRun } from '../engine/upload-object.ts'
import { MIN_PART_SIZE } from '../protocol/limits.ts'
import { createUploadHandler } from '../server/index.ts'

const rgw = inject('rgw')
const admin = sdkClient(rgw)
afterAll(() => admin.destroy())

const target = (key: string, extra: Partial<ObjectTarget> = {}): ObjectTarget => directTarget(rgw, key, extra)
const newKey = (name: string) => `checksums/${crypto.randomUUID()}/${name}`
const read = async (key: string) =>
  (await admin.send(new GetObjectCommand({ Bucket: rgw.bucket, Key: key }))).Body!.transformToByteArray()

/** The header value for `bytes`: node:crypto, node:zlib (CRC32C has no Node implementation: the unit-tested one). */
function expected(algorithm: string, bytes: Uint8Array): string {
  if (algorithm === 'md5' || algorithm === 'sha256') return createHash(algorithm).update(bytes).digest('base64')
  const value = Buffer.alloc(4)
  value.writeUInt32BE(algorithm === 'crc32' ? crc32(bytes) : crc(CRC32C, bytes))
  return value.toString('base64')
}

const partOf = ({ url }: HttpRequest) => Number(new URL(url).searchParams.get('partNumber') ?? 0)

/** A run that sends fixed, wrong checksum headers with the single PUT or part 1: what does RGW do with them? */
const lying =
  (headers: Record<string, string>, create?: Record<string, string>): ObjectTarget['checksum'] =>
  () =>
    ({
      create,
      headers: async (partNumber) => (partNumber < 2 ? headers : {}),
      complete: async () => undefined,
      stored: async () => {},
    }) satisfies ChecksumRun

describe('every algorithm on Ceph RGW: single PUT and multipart read back byte-exact', () => {
  for (const algorithm of ['md5', 'crc32', 'crc32c', 'sha256'] as const) {
    it(algorithm, async () => {
      const header = algorithm === 'md5' ? 'content-md5' : `x-amz-checksum-${algorithm}`
      for (const [size, seed] of [
        [300_001, 1],
        [2 * MIN_PART_SIZE + 77, 2],
      ] as const) {
        const key = newKey(`${algorithm}-${size}.bin`)
        const bytes = testBytes(size, seed)
        const sent: HttpRequest[] = []
        const recording: Transport = (request) => (sent.push(request), fetchTransport(request))
        await uploadObject(new Blob([bytes]), target(key, { ...checksum(algorithm), transport: recording }))
        expect(sha256(await read(key))).toBe(sha256(bytes))
        // Each body carries its own checksum, as node:crypto/zlib compute it (parts go in parallel, in any order).
        const bodies = sent.filter(({ body }) => body instanceof Blob).sort((a, b) => partOf(a) - partOf(b))
        const parts =
          size > MIN_PART_SIZE
            ? [
                bytes.subarray(0, MIN_PART_SIZE),
                bytes.subarray(MIN_PART_SIZE, 2 * MIN_PART_SIZE),
                bytes.subarray(2 * MIN_PART_SIZE),
              ]
            : [bytes]
        expect(bodies.map(({ headers }) => headers?.[header])).toEqual(parts.map((part) => expected(algorithm, part)))
        expect(sent.some(({ headers }) => headers && 'x-amz-sdk-checksum-algorithm' in headers)).toBe(false)
        if (size > MIN_PART_SIZE) {
          const [create] = sent
          // The last POST: RGW's Complete reply names no ETag, so a HEAD follows it (withStoredETag).
          const complete = sent.filter(({ method }) => method === 'POST').at(-1)!
          expect(create!.headers?.['x-amz-checksum-algorithm']).toBe(
            algorithm === 'md5' ? undefined : algorithm.toUpperCase(),
          )
          const element = `Checksum${algorithm.toUpperCase()}`
          expect(String(complete.body).includes(`<${element}>${expected(algorithm, parts[1]!)}</${element}>`)).toBe(
            algorithm !== 'md5',
          )
        }
      }
    })
  }
})

describe('Node Buffer bodies with a checksum: hashed in the worker from a copy, the caller keeps its bytes', () => {
  // Regression: the copy posted to the worker was `buffer.slice()`, which for a Node Buffer is a
  // view; transferring its memory detached the caller's Buffer, and the part went out empty
  // (RGW ignores x-amz-checksum-*, so an empty object was stored and reported as uploaded).
  for (const algorithm of ['crc32c', 'md5'] as const) {
    it(`${algorithm}: a Buffer (single PUT) and a view into a larger Buffer (multipart) read back byte-exact`, async () => {
      const whole = Buffer.from(testBytes(2 * MIN_PART_SIZE + 300_077, 3))
      const bodies = [Buffer.from(testBytes(300_001, 4)), whole.subarray(100_000, 100_000 + 2 * MIN_PART_SIZE + 77)]
      for (const body of bodies) {
        const copy = Buffer.from(body)
        const key = newKey(`${algorithm}-buffer-${body.length}.bin`)
        await uploadObject(body, target(key, checksum(algorithm)))
        expect(body.byteLength).toBe(copy.byteLength)
        expect(sha256(await read(key))).toBe(sha256(copy))
      }
      expect(whole.byteLength).toBe(2 * MIN_PART_SIZE + 300_077)
    })
  }
})

describe('every algorithm on s3rver (its multipart ETag is not S3-style: no false mismatch)', () => {
  let s3rver: S3rverInstance
  beforeAll(async () => {
    s3rver = await startS3rver()
  })
  afterAll(() => s3rver?.stop())

  it('single PUT and multipart read back byte-exact', async () => {
    for (const algorithm of ['md5', 'crc32', 'crc32c', 'sha256'] as const) {
      for (const [size, seed] of [
        [1234, 61],
        [MIN_PART_SIZE + 99, 62],
      ] as const) {
        const bytes = testBytes(size, seed)
        const key = newKey(`s3rver-${algorithm}-${size}.bin`)
        await uploadObject(new Blob([bytes]), directTarget(s3rver, key, checksum(algorithm)))
        const client = sdkClient(s3rver)
        expect(sha256(await readObject(client, s3rver.bucket, key))).toBe(sha256(bytes))
        client.destroy()
      }
    }
  })
})

describe('token-mode upload() (the upload API on RGW, assume-role credentials for one key)', () => {
  it('md5 and crc32c, single and multipart: each body carries its checksum; byte-exact', async () => {
    const served = await serveHandler(
      createUploadHandler(storeConfig(rgw, { sts: { mode: 'assume-role', roleArn: rgw.roleArn } })),
    )
    try {
      for (const [algorithm, size, seed] of [
        ['md5', 4321, 11],
        ['crc32c', MIN_PART_SIZE + 3, 12],
      ] as const) {
        const bytes = testBytes(size, seed)
        const sent: HttpRequest[] = []
        const recording: Transport = (request) => (sent.push(request), fetchTransport(request))
        const { key } = await upload(new Blob([bytes]), {
          api: served.api,
          strategy: 'token',
          transport: recording,
          ...checksum(algorithm),
        })
        expect(sha256(await read(key))).toBe(sha256(bytes))
        const header = algorithm === 'md5' ? 'content-md5' : 'x-amz-checksum-crc32c'
        const bodies = sent.filter(({ body }) => body instanceof Blob)
        expect(bodies).toHaveLength(size > MIN_PART_SIZE ? 2 : 1)
        for (const { headers } of bodies) expect(headers?.[header]).toMatch(/^[A-Za-z0-9+/]+=*$/)
      }
    } finally {
      await served.close()
    }
  })

  it("presigned mode refuses checksums other than 'md5' before anything is sent (AWS refuses an unsigned x-amz-checksum-*)", async () => {
    const sent: HttpRequest[] = []
    const recording: Transport = async (request) => (sent.push(request), fetchTransport(request))
    for (const strategy of ['presigned', undefined] as const) {
      const send = strategy ? upload : uploadPresigned
      const error = await send(new Blob(['x']), {
        strategy,
        api: 'http://127.0.0.1:1/api',
        transport: recording,
        ...checksum('crc32c'),
      }).catch((caught: unknown) => caught)
      expect(error).toEqual(
        new TypeError(
          "updraft: presigned mode takes checksum('md5') only, got 'crc32c': AWS refuses x-amz-checksum-* headers a presigned URL does not sign",
        ),
      )
    }
    expect(sent).toEqual([])
  })

  it('an unknown algorithm is a TypeError naming the choices', () => {
    expect(() => checksum('crc64' as 'crc32')).toThrow(
      new TypeError('updraft: checksum must be one of crc32, crc32c, sha256, md5, got crc64'),
    )
  })
})

describe("presigned mode with 'md5': Content-MD5 on every PUT, verified by RGW without the URL signing it", () => {
  async function presignedUpload(bytes: Uint8Array<ArrayBuffer>, damaged: (step: string) => boolean) {
    const flipped: string[] = []
    const proxy = await startFaultProxy({
      target: rgw.endpoint,
      kind: 'storage',
      decide: ({ step }) => (damaged(step) ? (flipped.push(step), 'flip-byte') : undefined),
    })
    const served = await serveHandler(createUploadHandler(storeConfig({ ...rgw, endpoint: proxy.url })))
    const sent: HttpRequest[] = []
    const retried: unknown[] = []
    try {
      const result = await uploadPresigned(new Blob([bytes]), {
        api: served.api,
        transport: (request) => (sent.push(request), fetchTransport(request)),
        retry: { delay: 1 },
        onRetry: ({ error }) => retried.push(error),
        ...checksum('md5'),
      })
      return { result, sent, retried, flipped }
    } finally {
      await served.close()
      await proxy.stop()
    }
  }

  it('single PUT and multipart: each PUT carries the right Content-MD5, which the part URLs sign; byte-exact', async () => {
    for (const [size, seed] of [
      [7000, 31],
      [2 * MIN_PART_SIZE + 9, 32],
    ] as const) {
      const bytes = testBytes(size, seed)
      const { result, sent } = await presignedUpload(bytes, () => false)
      const puts = sent.filter(({ body }) => body instanceof Blob).sort((a, b) => partOf(a) - partOf(b))
      const parts =
        size > MIN_PART_SIZE
          ? [
              bytes.subarray(0, MIN_PART_SIZE),
              bytes.subarray(MIN_PART_SIZE, 2 * MIN_PART_SIZE),
              bytes.subarray(2 * MIN_PART_SIZE),
            ]
          : [bytes]
      expect(puts.map(({ headers }) => headers?.['content-md5'])).toEqual(parts.map((part) => expected('md5', part)))
      if (size > MIN_PART_SIZE) {
        const asked = sent
          .filter(({ url }) => url.endsWith('/parts'))
          .map(({ body }) => JSON.parse(String(body)) as { contentMd5: Record<string, string> })
        expect(asked.map(({ contentMd5 }) => contentMd5)).toEqual([
          { 1: expected('md5', parts[0]!), 2: expected('md5', parts[1]!), 3: expected('md5', parts[2]!) },
        ])
        for (const { url } of puts)
          expect(new URL(url).searchParams.get('X-Amz-SignedHeaders')).toBe('content-length;content-md5;host')
      }
      expect(sha256(await read(result.key))).toBe(sha256(bytes))
    }
  })

  it('a part damaged on the way: BadDigest, sent again with the same URL, byte-exact', async () => {
    const bytes = testBytes(2 * MIN_PART_SIZE + 9, 33)
    let first = true
    const { result, retried, flipped } = await presignedUpload(
      bytes,
      (step) => step === 'PUT ?partNumber' && first && !(first = false),
    )
    expect(flipped).toHaveLength(1)
    expect(retried).toEqual([expect.objectContaining({ code: 'BadDigest', status: 400 })])
    expect(sha256(await read(result.key))).toBe(sha256(bytes))
  })

  it('a single PUT damaged on the way: the same', async () => {
    const bytes = testBytes(7000, 34)
    let first = true
    const { result, retried } = await presignedUpload(bytes, (step) => step === 'PUT' && first && !(first = false))
    expect(retried).toEqual([expect.objectContaining({ code: 'BadDigest' })])
    expect(sha256(await read(result.key))).toBe(sha256(bytes))
  })
})

describe('a part URL that signs Content-MD5, used by someone else (the upload API on RGW)', () => {
  const handler = createUploadHandler(storeConfig(rgw))
  const post = async (path: string, body: unknown) => {
    const response = await handler(
      new Request(`http://app.test/api/s3-upload${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }),
    )
    return { status: response.status, json: (await response.json()) as Record<string, unknown> }
  }

  it('is refused without that Content-MD5, with another, and for other bytes; the signed bytes pass', async () => {
    const bytes = testBytes(MIN_PART_SIZE + 10, 41)
    const started = await post('', {
      filename: 'x.bin',
      filetype: 'application/octet-stream',
      filesize: bytes.length,
      strategy: 'presigned',
    })
    expect(started.status).toBe(200)
    const { ticket } = started.json as { ticket: string }
    const part = bytes.subarray(0, MIN_PART_SIZE)
    const md5 = expected('md5', part)
    const { json } = await post('/parts', { ticket, partNumbers: [1], contentMd5: { 1: md5 } })
    const url = (json.urls as Record<string, string>)[1]!
    const other = part.slice()
    other[5]! ^= 1
    const put = (body: Uint8Array<ArrayBuffer>, headers: Record<string, string>) =>
      fetch(url, { method: 'PUT', body, headers })
    expect((await put(part, {})).status).toBe(403)
    expect((await put(other, { 'content-md5': expected('md5', other) })).status).toBe(403)
    const damaged = await put(other, { 'content-md5': md5 })
    expect(damaged.status).toBe(400)
    expect(await damaged.text()).toContain('<Code>BadDigest</Code>')
    expect((await put(part, { 'content-md5': md5 })).status).toBe(200)
    await post('/abort', { ticket })
  })

  it('/parts refuses a contentMd5 that is not an object, names a part not asked for, or is not a base64 MD5', async () => {
    const started = await post('', {
      filename: 'x.bin',
      filetype: 'application/octet-stream',
      filesize: MIN_PART_SIZE + 1,
      strategy: 'presigned',
    })
    const { ticket } = started.json as { ticket: string }
    const cases: Array<[unknown, string]> = [
      ['abc', 'contentMd5 must be an object of part number → base64 MD5, got "abc"'],
      [{ 2: 'AAAAAAAAAAAAAAAAAAAAAA==' }, 'contentMd5 names part "2", which is not among partNumbers'],
      [
        { 1: 'AAAA\r\nx-amz-acl: public-read' },
        'contentMd5[1] must be the base64 MD5 of the part (24 characters), got',
      ],
    ]
    for (const [contentMd5, message] of cases) {
      const { status, json } = await post('/parts', { ticket, partNumbers: [1], contentMd5 })
      expect(status).toBe(400)
      expect(String(json.error)).toContain(message)
    }
    await post('/abort', { ticket })
  })
})

describe('what RGW 16.2 verifies', () => {
  it('Content-MD5: a wrong one is refused with 400 BadDigest, on a single PUT and on a part', async () => {
    const wrong = { 'content-md5': 'AAAAAAAAAAAAAAAAAAAAAA==' }
    for (const size of [1000, MIN_PART_SIZE + 1]) {
      const key = newKey(`bad-md5-${size}.bin`)
      const retried: unknown[] = []
      const error = await uploadObject(
        new Blob([testBytes(size, 3)]),
        target(key, {
          checksum: lying(wrong),
          retry: { limit: 1, delay: 1 },
          onRetry: ({ error }) => retried.push(error),
        }),
      ).catch((caught: unknown) => caught)
      // Retried (the bytes may have been damaged on the way), and refused again: the checksum is wrong.
      expect(retried).toHaveLength(1)
      expect(error).toBeInstanceOf(S3Error)
      expect(error).toMatchObject({ code: 'BadDigest', status: 400 })
      await expect(admin.send(new HeadObjectCommand({ Bucket: rgw.bucket, Key: key }))).rejects.toMatchObject({
        name: 'NotFound',
      })
    }
  })

  it('x-amz-checksum-*: a wrong one is ignored (stored anyway), on a single PUT and multipart with x-amz-checksum-algorithm', async () => {
    // RGW learnt flexible checksums in Reef (18); if this starts failing, say so in the README.
    for (const algorithm of ['crc32', 'crc32c', 'sha256'] as const) {
      for (const size of [1000, MIN_PART_SIZE + 1]) {
        const key = newKey(`ignored-${algorithm}-${size}.bin`)
        const bytes = testBytes(size, 4)
        const wrong = { [`x-amz-checksum-${algorithm}`]: algorithm === 'sha256' ? btoa('x'.repeat(32)) : 'AAAAAA==' }
        await uploadObject(
          new Blob([bytes]),
          target(key, { checksum: lying(wrong, { 'x-amz-checksum-algorithm': algorithm.toUpperCase() }) }),
        )
        expect(sha256(await read(key))).toBe(sha256(bytes))
      }
    }
  })
})

describe('damage on the way, through the fault proxy: one byte of a body flipped', () => {
  /** Uploads through a proxy in front of RGW that flips a byte of the bodies `damaged` picks. */
  async function throughProxy(
    bytes: Uint8Array<ArrayBuffer>,
    extra: Partial<ObjectTarget>,
    damaged: (step: string, url: string) => boolean,
  ) {
    const flipped: string[] = []
    const proxy = await startFaultProxy({
      target: rgw.endpoint,
      kind: 'storage',
      decide: ({ step, url }): Fault | undefined => (damaged(step, url) ? (flipped.push(url), 'flip-byte') : undefined),
    })
    const key = newKey('flipped.bin')
    const retried: unknown[] = []
    try {
      const outcome = await uploadObject(
        new Blob([bytes]),
        target(key, {
          endpoint: proxy.url,
          onRetry: ({ error }) => retried.push(error),
          ...extra,
          retry: { delay: 1, ...extra.retry },
        }),
      ).catch((caught: unknown) => caught)
      return { key, outcome, retried, flipped }
    } finally {
      await proxy.stop()
    }
  }

  it('md5, multipart: RGW answers BadDigest for the damaged part, the engine sends that part again, the object reads back byte-exact', async () => {
    const bytes = testBytes(3 * MIN_PART_SIZE + 11, 21)
    let first = true
    // The first attempt at part 2 only.
    const damaged = (step: string, url: string) =>
      step === 'PUT ?partNumber' && url.includes('partNumber=2&') && first && !(first = false)
    const { key, outcome, retried, flipped } = await throughProxy(bytes, checksum('md5'), damaged)
    expect(outcome).toMatchObject({ key })
    expect(flipped).toHaveLength(1)
    expect(retried).toEqual([expect.objectContaining({ name: 'S3Error', code: 'BadDigest', status: 400 })])
    expect(sha256(await read(key))).toBe(sha256(bytes))
  })

  it('md5, single PUT: BadDigest, sent again, byte-exact', async () => {
    const bytes = testBytes(100_000, 22)
    let first = true
    const { key, outcome, retried } = await throughProxy(
      bytes,
      checksum('md5'),
      (step) => step === 'PUT' && first && !(first = false),
    )
    expect(outcome).toMatchObject({ key })
    expect(retried).toEqual([expect.objectContaining({ code: 'BadDigest' })])
    expect(sha256(await read(key))).toBe(sha256(bytes))
  })

  it('every attempt at a part damaged: the upload fails with BadDigest after maxAttempts and nothing is stored', async () => {
    const bytes = testBytes(MIN_PART_SIZE + 1, 23)
    const damaged = (step: string, url: string) => step === 'PUT ?partNumber' && url.includes('partNumber=1&')
    const { key, outcome, retried } = await throughProxy(bytes, { ...checksum('md5'), retry: { limit: 2 } }, damaged)
    expect(outcome).toMatchObject({ name: 'S3Error', code: 'BadDigest' })
    expect(retried).toHaveLength(2)
    await expect(admin.send(new HeadObjectCommand({ Bucket: rgw.bucket, Key: key }))).rejects.toMatchObject({
      name: 'NotFound',
    })
  })

  it('without a checksum (or with crc32c, which RGW 16.2 ignores) the damage is stored: what the opt-in is for', async () => {
    for (const extra of [{}, checksum('crc32c')]) {
      const bytes = testBytes(50_000, 24)
      let first = true
      const { key, outcome, retried } = await throughProxy(
        bytes,
        extra,
        (step) => step === 'PUT' && first && !(first = false),
      )
      expect(outcome).toMatchObject({ key })
      expect(retried).toEqual([])
      const stored = await read(key)
      expect(stored.length).toBe(bytes.length)
      expect(stored[25_000]).toBe(bytes[25_000]! ^ 0xff)
    }
  })
})

describe('a mismatch the engine sees itself', () => {
  it('an MD5 ETag that differs from the bytes sent rejects with "Checksum mismatch" (a store that ignored Content-MD5)', async () => {
    const key = newKey('etag-mismatch.bin')
    const run = checksum('md5').checksum!
    // Content-MD5 left off, as by a store that does not verify it; the ETag is the stored bytes' MD5.
    const withoutHeader: ObjectTarget['checksum'] = (t) => {
      const real = run(t)
      return { ...real, headers: async (n, body) => (await real.headers(n, body), {}) }
    }
    // The engine hashes one set of bytes and sends another: as if damaged after hashing.
    const bytes = testBytes(1000, 5)
    const damaged = bytes.slice()
    damaged[10]! ^= 1
    const error = await uploadObject(
      new Blob([bytes]),
      target(key, {
        checksum: (t) => {
          const real = withoutHeader(t)
          return { ...real, headers: (n) => real.headers(n, new Blob([damaged])) }
        },
      }),
    ).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(UploadError)
    expect((error as Error).message).toMatch(/^Checksum mismatch: storage reports ETag [0-9a-f]{32} for the object/)
  })

  it('multipart: a part ETag that differs rejects before Complete, and the upload is aborted', async () => {
    const key = newKey('part-mismatch.bin')
    const bytes = testBytes(2 * MIN_PART_SIZE, 6)
    let cleanedUp!: (error?: unknown) => void
    const cleanup = new Promise<unknown>((resolve) => (cleanedUp = resolve))
    const error = await uploadObject(
      new Blob([bytes]),
      target(key, {
        checksum: (t) => {
          const real = checksum('md5').checksum!(t)
          // Part 2 hashed as other bytes, sent without Content-MD5.
          return {
            ...real,
            headers: async (n, body) => (await real.headers(n, n === 2 ? new Blob([body as BlobPart, 'x']) : body), {}),
          }
        },
        onCleanup: (failure) => cleanedUp(failure),
      }),
    ).catch((caught: unknown) => caught)
    expect((error as Error).message).toMatch(/^Checksum mismatch: storage reports ETag [0-9a-f]{32} for part 2/)
    expect(await cleanup).toBeUndefined()
    const listed = await admin.send(new ListMultipartUploadsCommand({ Bucket: rgw.bucket, Prefix: key }))
    expect(listed.Uploads ?? []).toEqual([])
    await expect(admin.send(new HeadObjectCommand({ Bucket: rgw.bucket, Key: key }))).rejects.toMatchObject({
      name: 'NotFound',
    })
  })

  it('a Complete reply whose composite checksum differs (AWS echoes one; RGW 16.2 does not) rejects with "Checksum mismatch"', async () => {
    for (const [echo, fails] of [
      ['right', false],
      ['wrong', true],
    ] as const) {
      const key = newKey(`composite-${echo}.bin`)
      const bytes = testBytes(2 * MIN_PART_SIZE + 5, 7)
      const parts = [
        bytes.subarray(0, MIN_PART_SIZE),
        bytes.subarray(MIN_PART_SIZE, 2 * MIN_PART_SIZE),
        bytes.subarray(2 * MIN_PART_SIZE),
      ]
      const joined = Buffer.concat(parts.map((part) => Buffer.from(expected('crc32c', part), 'base64')))
      const composite = `${expected('crc32c', echo === 'right' ? joined : joined.subarray(1))}-3`
      // RGW's real reply, with the element AWS adds to it.
      const echoing: Transport = async (request) => {
        const reply = await fetchTransport(request)
        if (!String(request.body).startsWith('<CompleteMultipartUpload')) return reply
        return {
          ...reply,
          body: reply.body.replace(
            '</CompleteMultipartUploadResult>',
            `<ChecksumCRC32C>${composite}</ChecksumCRC32C>$&`,
          ),
        }
      }
      const outcome = await uploadObject(
        new Blob([bytes]),
        target(key, { ...checksum('crc32c'), transport: echoing }),
      ).catch((caught: unknown) => caught)
      if (fails)
        expect((outcome as Error).message).toBe(
          `Checksum mismatch: storage reports crc32c ${composite} for the object, the bytes sent give ${expected('crc32c', joined)}-3; the data was damaged on the way, upload it again`,
        )
      else expect(outcome).toMatchObject({ key })
    }
  })

  it("md5, multipart: a Complete ETag in S3's form (MD5 of the part MD5s, -N) is checked; RGW's empty one is not", async () => {
    const bytes = testBytes(MIN_PART_SIZE + 5, 9)
    const parts = [bytes.subarray(0, MIN_PART_SIZE), bytes.subarray(MIN_PART_SIZE)]
    const right = `${createHash('md5')
      .update(Buffer.concat(parts.map((part) => createHash('md5').update(part).digest())))
      .digest('hex')}-2`
    for (const [etag, fails] of [
      [right, false],
      [`${'0'.repeat(32)}-2`, true],
    ] as const) {
      const key = newKey(`md5-composite-${fails}.bin`)
      const stating: Transport = async (request) => {
        const reply = await fetchTransport(request)
        if (!String(request.body).startsWith('<CompleteMultipartUpload')) return reply
        return { ...reply, body: reply.body.replace(/<ETag>[^<]*<\/ETag>/, `<ETag>&quot;${etag}&quot;</ETag>`) }
      }
      const outcome = await uploadObject(
        new Blob([bytes]),
        target(key, { ...checksum('md5'), transport: stating }),
      ).catch((caught: unknown) => caught)
      if (fails)
        expect((outcome as Error).message).toMatch(
          `Checksum mismatch: storage reports ETag ${etag} for the object, the bytes sent give ${right}`,
        )
      else expect(outcome).toMatchObject({ key, etag: `"${etag}"` })
    }
  })

  it('a single PUT whose echoed x-amz-checksum-sha256 differs rejects with "Checksum mismatch"', async () => {
    const key = newKey('echo.bin')
    const echoing: Transport = async (request) => {
      const reply = await fetchTransport(request)
      return {
        ...reply,
        header: (name) => (name === 'x-amz-checksum-sha256' ? btoa('y'.repeat(32)) : reply.header(name)),
      }
    }
    const error = await uploadObject(
      new Blob([testBytes(999, 8)]),
      target(key, { ...checksum('sha256'), transport: echoing }),
    ).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(UploadError)
    expect((error as Error).message).toMatch(/^Checksum mismatch: storage reports sha256 /)
  })
})
