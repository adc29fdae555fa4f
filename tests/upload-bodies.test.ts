// Bodies that are not Blobs (issue 14): Uint8Array/Buffer, ReadableStream and async iterables of
// known and unknown length, uploaded to s3rver and Ceph RGW, directly (uploadObject) and through
// the HTTP upload API (upload(), streams of known length). Every object is read back and compared.
// upload() of unknown length needs the upload API's side: tests/upload-unknown-size.test.ts.
import { Readable } from 'node:stream'
import { ListMultipartUploadsCommand } from '@aws-sdk/client-s3'
import { unzipSync, Zip, ZipDeflate, ZipPassThrough } from 'fflate'
import { describe, expect, inject, it } from 'vitest'
import { startFaultProxy } from '../dev/fault-proxy.ts'
import { readObject, sha256, testBytes } from '../dev/s3-client.ts'
import { directTarget, type TestStore } from '../dev/stores.ts'
import {
  BodyError,
  fetchTransport,
  type Progress,
  resumeUploads,
  type Transport,
  UploadAbortedError,
  upload,
  uploadObject,
} from '../engine/index.ts'
import { checksum } from '../engine/opt-ins/checksums/index.ts'
import { memoryResumeStore } from '../engine/resume/resume-store.ts'
import { nodeTransport } from '../engine/transport/node-transport.ts'
import { MiB } from '../protocol/limits.ts'
import type { UploadHandlerConfig } from '../server/index.ts'
import { uploadApiFixture } from './helpers/upload-api-fixture.ts'

const rgw = inject('rgw')
const { stores, uploadApiFor, readerFor } = uploadApiFixture()
const PART = 5 * MiB

/** `data` as an async generator of chunks of `size` bytes (views, as streams hand them out). */
async function* chunked(data: Uint8Array, size: number) {
  for (let at = 0; at < data.length; at += size) yield data.subarray(at, at + size)
}

/** The same chunks as a web ReadableStream, pulled on demand. */
const readableOf = (data: Uint8Array, size: number) => {
  const chunks = chunked(data, size)
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await chunks.next()
      if (done) controller.close()
      else controller.enqueue(value)
    },
  })
}

const newKey = (label: string) => `bodies/${label}-${crypto.randomUUID()}.bin`

/** Progress as reported, checked for sanity: loaded never above total, neither going back. */
function progressLog() {
  const seen: Progress[] = []
  return {
    seen,
    onProgress: (progress: Progress) => {
      const last = seen.at(-1)
      expect(progress.loaded).toBeLessThanOrEqual(progress.total)
      if (last) {
        expect(progress.loaded).toBeGreaterThan(last.loaded)
        expect(progress.total).toBeGreaterThanOrEqual(last.total)
      }
      seen.push(progress)
    },
  }
}

async function expectStored(store: TestStore, key: string, data: Uint8Array) {
  const stored = await readObject(readerFor(store), store.bucket, key)
  expect(stored.length).toBe(data.length)
  expect(sha256(stored)).toBe(sha256(data))
}

async function expectNoUploadLeft(key: string) {
  const listed = await readerFor(rgw).send(new ListMultipartUploadsCommand({ Bucket: rgw.bucket, Prefix: key }))
  expect(listed.Uploads ?? []).toEqual([])
}

describe.each(Object.entries(stores))('uploadObject() with bodies that are not Blobs, on %s', (_name, store) => {
  it.each([
    ['a Buffer, one PUT (200 kB)', 200_000],
    ['a Buffer, multipart (12 MiB + 3 B → 3 parts)', 12 * MiB + 3],
  ])('%s: read back byte-exact, progress ends at the size', async (_label, size) => {
    const data = Buffer.from(testBytes(size, 41))
    const key = newKey('buffer')
    const progress = progressLog()
    await uploadObject(data, directTarget(store(), key, { partSize: PART, onProgress: progress.onProgress }))
    await expectStored(store(), key, data)
    expect(progress.seen.at(-1)).toEqual({ loaded: size, total: size })
  })

  it('a Uint8Array through the fetch transport (workers), multipart, byte-exact', async () => {
    const data = testBytes(11 * MiB + 1, 56)
    const key = newKey('fetch-bytes')
    await uploadObject(data, directTarget(store(), key, { partSize: PART, transport: fetchTransport }))
    await expectStored(store(), key, data)
  })

  it('a Uint8Array view into a larger buffer (an offset) sends only its own bytes', async () => {
    const backing = testBytes(13 * MiB, 42)
    const view = backing.subarray(MiB + 17, 12 * MiB + 5)
    const key = newKey('view')
    await uploadObject(view, directTarget(store(), key, { partSize: PART }))
    await expectStored(store(), key, view)
  })

  it('a ReadableStream of known length (size option), 64 KiB chunks: total is the size throughout', async () => {
    const data = testBytes(11 * MiB + 123, 43)
    const key = newKey('readable-known')
    const progress = progressLog()
    await uploadObject(
      readableOf(data, 64 * 1024),
      directTarget(store(), key, { size: data.length, partSize: PART, onProgress: progress.onProgress }),
    )
    await expectStored(store(), key, data)
    expect(new Set(progress.seen.map((p) => p.total))).toEqual(new Set([data.length]))
    expect(progress.seen.at(-1)!.loaded).toBe(data.length)
  })

  it('an async iterable of unknown length, 100-byte chunks: the total grows, ends at the size', async () => {
    const data = testBytes(11 * MiB + 7, 44)
    const key = newKey('iterable-unknown')
    const progress = progressLog()
    await uploadObject(
      chunked(data, 100),
      directTarget(store(), key, { partSize: PART, onProgress: progress.onProgress }),
    )
    await expectStored(store(), key, data)
    expect(progress.seen[0]!.total).toBeLessThan(data.length)
    expect(progress.seen.at(-1)).toEqual({ loaded: data.length, total: data.length })
  })

  it('a Node Readable (an async iterable) that ends within one part goes as one PUT', async () => {
    const data = testBytes(300_000, 45)
    const key = newKey('node-readable-small')
    await uploadObject(Readable.from(chunked(data, 4096)), directTarget(store(), key, { partSize: PART }))
    await expectStored(store(), key, data)
  })

  it('a chunk bigger than a part (one 12 MiB chunk, 5 MiB parts)', async () => {
    const data = testBytes(12 * MiB, 46)
    const key = newKey('big-chunk')
    await uploadObject(chunked(data, data.length), directTarget(store(), key, { partSize: PART }))
    await expectStored(store(), key, data)
  })

  it('an empty stream stores an empty object', async () => {
    const key = newKey('empty')
    await uploadObject(chunked(new Uint8Array(0), 1), directTarget(store(), key))
    await expectStored(store(), key, new Uint8Array(0))
  })

  it('a zip made on the fly (fflate) uploads as a stream of unknown length and unzips to its files', async () => {
    const video = testBytes(7 * MiB, 47)
    const notes = new TextEncoder().encode('notes\n'.repeat(200_000))
    const zipped = new Readable({ read() {} })
    const zip = new Zip((error, chunk, final) => {
      if (error) return void zipped.destroy(error)
      zipped.push(chunk)
      if (final) zipped.push(null)
    })
    const key = newKey('archive')
    const uploading = uploadObject(
      zipped,
      directTarget(store(), key, { partSize: PART, contentType: 'application/zip' }),
    )
    // Files are fed in pieces, as an archiver reading disks would.
    const stored = new ZipPassThrough('video.bin')
    const deflated = new ZipDeflate('notes.txt', { level: 6 })
    zip.add(stored)
    zip.add(deflated)
    for (let at = 0; at < video.length; at += MiB) stored.push(video.subarray(at, at + MiB), at + MiB >= video.length)
    deflated.push(notes, true)
    zip.end()
    await uploading
    const files = unzipSync(await readObject(readerFor(store()), store().bucket, key))
    expect(sha256(files['video.bin']!)).toBe(sha256(video))
    expect(sha256(files['notes.txt']!)).toBe(sha256(notes))
  })
})

describe('a stream part that fails on the way is sent again from memory (RGW, through a fault proxy)', () => {
  it.each(['reset-during', '500'] as const)('%s on part 2: retried, byte-exact, part 2 sent twice', async (fault) => {
    let faulted = false
    const proxy = await startFaultProxy({
      target: rgw.endpoint,
      kind: 'storage',
      decide: ({ step, url }) =>
        step === 'PUT ?partNumber' && url.includes('partNumber=2&') && !faulted ? ((faulted = true), fault) : undefined,
    })
    try {
      const data = testBytes(12 * MiB + 3, 58)
      const key = newKey(`retry-${fault}`)
      await uploadObject(chunked(data, 300_000), {
        ...directTarget(stores.rgw(), key, { partSize: PART, retry: { delay: 1 } }),
        endpoint: proxy.url,
      })
      await expectStored(stores.rgw(), key, data)
      const part2 = proxy.log.filter((entry) => entry.step === 'PUT ?partNumber' && entry.url.includes('partNumber=2&'))
      expect(part2).toHaveLength(2)
      expect(part2[1]!.status).toBe(200)
    } finally {
      await proxy.stop()
    }
  })
})

describe('backpressure', () => {
  it('a stream is read only as slots free up: at most (partConcurrency + 1) parts held beyond what storage accepted', async () => {
    const data = testBytes(31 * MiB, 57)
    const chunk = 256 * 1024
    const partConcurrency = 2
    let yielded = 0
    let accepted = 0
    let mostHeld = 0
    async function* counted() {
      for (let at = 0; at < data.length; at += chunk) {
        mostHeld = Math.max(mostHeld, yielded - accepted)
        yielded += chunk
        yield data.subarray(at, at + chunk)
      }
    }
    const transport: Transport = async (request) => {
      const response = await nodeTransport(request)
      if (request.method === 'PUT' && request.url.includes('partNumber=') && response.status === 200)
        accepted += (request.body as Uint8Array).byteLength
      return response
    }
    const key = newKey('backpressure')
    await uploadObject(counted(), directTarget(stores.s3rver(), key, { partSize: PART, partConcurrency, transport }))
    await expectStored(stores.s3rver(), key, data)
    expect(mostHeld).toBeLessThanOrEqual((partConcurrency + 1) * PART + chunk)
  })
})

describe('1-byte chunks', () => {
  it('a stream of 1-byte chunks over one part is gathered into parts, byte-exact (s3rver)', async () => {
    const data = testBytes(PART + 5000, 48)
    const key = newKey('one-byte')
    async function* bytewise() {
      for (let i = 0; i < data.length; i++) yield data.subarray(i, i + 1)
    }
    await uploadObject(bytewise(), directTarget(stores.s3rver(), key, { partSize: PART }))
    await expectStored(stores.s3rver(), key, data)
  })
})

describe('streams with checksums on RGW', () => {
  it('uploadObject, md5, a stream of unknown length: each part hashed as read, byte-exact', async () => {
    const data = testBytes(11 * MiB + 1, 53)
    const key = newKey('stream-md5')
    await uploadObject(chunked(data, 100_000), directTarget(stores.rgw(), key, { partSize: PART, ...checksum('md5') }))
    await expectStored(stores.rgw(), key, data)
  })

  it('presigned upload(), md5, a stream of known length: each part URL asked once the part is read, with its MD5', async () => {
    const { api, calls, client } = await uploadApiFor(rgw)
    const data = testBytes(11 * MiB + 2, 54)
    const result = await upload(chunked(data, 100_000), {
      api,
      strategy: 'presigned',
      size: data.length,
      filename: 'sum.bin',
      contentType: 'application/octet-stream',
      ...checksum('md5'),
    })
    expect(sha256(await readObject(client, result.bucket, result.key))).toBe(sha256(data))
    const parts = calls
      .filter((call) => call.route === '/parts')
      .map((call) => call.body as { partNumbers: number[]; contentMd5: Record<string, string> })
    // One /parts call per part, as each is read; parts hash concurrently (in workers), so their
    // calls may arrive in any order.
    expect(parts.map(({ partNumbers }) => partNumbers).sort(([a], [b]) => a! - b!)).toEqual([[1], [2], [3]])
    for (const { partNumbers, contentMd5 } of parts) expect(Object.keys(contentMd5)).toEqual(partNumbers.map(String))
  })
})

describe('failing and aborted streams on RGW', () => {
  it('a stream that fails mid-way rejects with a BodyError and the multipart upload is aborted', async () => {
    const key = newKey('failing')
    const failure = new Error('source disk unplugged')
    async function* failing() {
      yield* chunked(testBytes(7 * MiB, 49), 256 * 1024)
      throw failure
    }
    let cleanedUp!: (error?: unknown) => void
    const cleanup = new Promise<unknown>((resolve) => (cleanedUp = resolve))
    const error = await uploadObject(failing(), directTarget(rgw, key, { partSize: PART, onCleanup: cleanedUp })).catch(
      (caught: unknown) => caught,
    )
    expect(error).toBeInstanceOf(BodyError)
    expect(error).toMatchObject({ cause: failure, message: expect.stringContaining('source disk unplugged') })
    expect(await cleanup).toBeUndefined()
    await expectNoUploadLeft(key)
  })

  it('an abort while the upload waits on the stream rejects at once, releases the stream and aborts the upload', async () => {
    const key = newKey('aborted')
    const controller = new AbortController()
    let released = false
    let sent = 0
    const first = testBytes(6 * MiB, 50)
    let at = 0
    // 6 MiB, then nothing more: a live source (a recorder, a socket) that has gone quiet.
    const quiet = new ReadableStream<Uint8Array>({
      pull(stream) {
        if (at >= first.length) return new Promise(() => {})
        stream.enqueue(first.subarray(at, (at += MiB)))
      },
      cancel: () => void (released = true),
    })
    let cleanedUp!: (error?: unknown) => void
    const cleanup = new Promise<unknown>((resolve) => (cleanedUp = resolve))
    const uploading = uploadObject(
      quiet,
      directTarget(rgw, key, {
        partSize: PART,
        signal: controller.signal,
        onCleanup: cleanedUp,
        onProgress: ({ loaded }: Progress) => {
          sent = loaded
          // Part 1 (5 MiB) is on its way: the engine now waits on the quiet stream for part 2.
          if (loaded >= PART - 1) controller.abort()
        },
      }),
    )
    await expect(uploading).rejects.toBeInstanceOf(UploadAbortedError)
    expect(sent).toBeGreaterThan(0)
    expect(await cleanup).toBeUndefined()
    expect(released).toBe(true)
    await expectNoUploadLeft(key)
  })
})

describe.each(Object.entries(stores))(
  'upload() through the upload API with bodies that are not Blobs, on %s',
  (name, store) => {
    const modes: Array<[string, UploadHandlerConfig, 'token' | 'presigned']> = [['presigned', {}, 'presigned']]
    if (name === 'rgw')
      modes.push([
        'token (assume-role)',
        { sts: { mode: 'assume-role', roleArn: rgw.roleArn, endpoint: rgw.endpoint } },
        'token',
      ])

    it.each(modes)('%s: a Buffer, multipart (12 MiB), read back byte-exact', async (_mode, config, strategy) => {
      const { api, client } = await uploadApiFor(store(), config)
      const data = Buffer.from(testBytes(12 * MiB, 51))
      const progress = progressLog()
      const result = await upload(data, {
        api,
        strategy,
        filename: 'data.bin',
        contentType: 'application/octet-stream',
        onProgress: progress.onProgress,
      })
      expect(sha256(await readObject(client, result.bucket, result.key))).toBe(sha256(data))
      expect(progress.seen.at(-1)).toEqual({ loaded: data.length, total: data.length })
    })

    it.each(modes)(
      '%s: a ReadableStream of known length, multipart (11 MiB) and one PUT (300 kB)',
      async (_mode, config, strategy) => {
        const { api, client, calls } = await uploadApiFor(store(), config)
        for (const size of [11 * MiB + 9, 300_000]) {
          const data = testBytes(size, 52)
          const result = await upload(readableOf(data, 32 * 1024), {
            api,
            strategy,
            size,
            filename: 'stream.bin',
            contentType: 'application/octet-stream',
          })
          expect(sha256(await readObject(client, result.bucket, result.key))).toBe(sha256(data))
        }
        // The upload API was told each size, as for a file.
        expect(
          calls.filter((call) => call.route === '').map((call) => (call.body as { filesize?: number }).filesize),
        ).toEqual([11 * MiB + 9, 300_000])
      },
    )

    it('with resume: bytes and streams upload and are never recorded (a Blob, the control, is)', async () => {
      const { api, client } = await uploadApiFor(store(), { resumable: true })
      const records = memoryResumeStore()
      const put = records.put.bind(records)
      const recorded: string[] = []
      records.put = (record) => (recorded.push(record.name), put(record))
      const resume = resumeUploads({ store: records })
      const data = testBytes(11 * MiB, 55)
      const named = (filename: string) => ({
        api,
        strategy: 'presigned' as const,
        resume,
        filename,
        contentType: 'application/octet-stream',
      })
      for (const [filename, body] of [
        ['bytes.bin', Buffer.from(data)],
        ['stream.bin', chunked(data, MiB)],
        ['blob.bin', new Blob([data])],
      ] as const) {
        const result = await upload(body, { ...named(filename), size: data.length })
        expect(sha256(await readObject(client, result.bucket, result.key))).toBe(sha256(data))
      }
      expect(new Set(recorded)).toEqual(new Set(['blob.bin']))
    })

    it('bytes or a stream without filename and contentType are refused before anything is sent', async () => {
      const { api, calls } = await uploadApiFor(store())
      await expect(upload(new Uint8Array(10), { api })).rejects.toThrow(
        /upload\(\) of bytes or a stream needs the filename and contentType options/,
      )
      await expect(upload(chunked(new Uint8Array(10), 1), { api, filename: 'x.bin' })).rejects.toThrow(TypeError)
      expect(calls).toEqual([])
    })
  },
)
