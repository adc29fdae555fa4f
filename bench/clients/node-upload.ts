// One upload in a child process of its own, so CPU time and peak RSS belong to one contender.
// Spawned by bench/lib/child.ts from an esbuild bundle (no TypeScript loader in the measured
// process); prints one JSON line with the measurements.
import { openAsBlob, readFileSync, writeFileSync } from 'node:fs'
import type { ClientRequest } from 'node:http'
import type { ClientResult, ClientSpec, UploadTarget } from '../lib/child.ts'

const spec = JSON.parse(process.argv[2] ?? '{}') as ClientSpec

const MiB = 1024 * 1024

/**
 * Each contender: set up (load modules, make clients) outside the clock, then return the timed run.
 * Every contender is handed the body as a Blob, but `updraft-buffer`, handed the same bytes as a
 * Node Buffer (made before the clock starts).
 */
const contenders: Record<ClientSpec['contender'], () => Promise<(body: Blob) => Promise<void>>> = {
  async updraft() {
    const { uploadObject } = await import('../../engine/index.ts')
    // As a runtime without worker_threads: updraft-s3/checksums then hashes on the upload's own thread.
    if (spec.checksumThread === 'main') {
      const { createRequire, syncBuiltinESMExports } = await import('node:module')
      createRequire(import.meta.url)('node:worker_threads').Worker = function NoWorkers() {
        throw new Error('no worker_threads in this measurement')
      }
      syncBuiltinESMExports()
    }
    const { checksum } = await import('../../engine/opt-ins/checksums/index.ts')
    const extras = spec.checksum ? checksum(spec.checksum) : {}
    return (body) => uploadObject(body, { ...objectTarget(spec), ...extras }).then(() => undefined)
  },
  // Issue 14: a Buffer body, sent as subarray views (no Blob around it).
  async 'updraft-buffer'() {
    const { uploadObject } = await import('../../engine/index.ts')
    return (body) => uploadObject(body as Blob | Buffer, objectTarget(spec)).then(() => undefined)
  },
  // Issue 14: the same bytes as a stream of unknown length: a file through fs.createReadStream
  // (1 MiB chunks), bytes in memory as 64 KiB views.
  async 'updraft-stream'() {
    const { uploadObject } = await import('../../engine/index.ts')
    const { createReadStream } = await import('node:fs')
    return (body) => {
      const bytes = body as unknown as Buffer
      async function* views() {
        for (let at = 0; at < bytes.byteLength; at += 65536) yield bytes.subarray(at, at + 65536)
      }
      // The warm-up's 1 KiB comes as bytes whatever the body kind.
      const file = spec.body.kind === 'file' && !(body instanceof Uint8Array) ? spec.body.path : undefined
      return uploadObject(file ? createReadStream(file, { highWaterMark: MiB }) : views(), objectTarget(spec)).then(
        () => undefined,
      )
    }
  },
  async 'updraft-fetch'() {
    const { uploadObject, fetchTransport } = await import('../../engine/index.ts')
    return (body) => uploadObject(body, { ...objectTarget(spec), transport: fetchTransport }).then(() => undefined)
  },
  // Through the upload API, as a page does: upload() asks it, then sends to storage.
  async 'updraft-token'() {
    const { upload } = await import('../../engine/index.ts')
    return (body) => upload(body, { ...apiOptions(spec), strategy: 'token' }).then(() => undefined)
  },
  async 'updraft-presigned'() {
    const { upload } = await import('../../engine/index.ts')
    return (body) => upload(body, { ...apiOptions(spec), strategy: 'presigned' }).then(() => undefined)
  },
  async 'lib-storage'() {
    const { libStorageUploader } = await import('./lib-storage-upload.ts')
    return libStorageUploader(spec.target, spec.partSize, spec.queueSize)
  },
  async 'fetch-ceiling'() {
    const { putRaw } = await rawMultipart()
    return (body) =>
      putRaw(body, async (url, slice) => {
        const response = await fetch(url, { method: 'PUT', body: slice })
        await response.arrayBuffer()
        return response.headers.get('etag') ?? ''
      })
  },
  // The same raw PUTs with the bytes as a Buffer: each part a subarray view, written whole.
  async 'http-ceiling-buffer'() {
    const { putRaw } = await rawMultipart()
    return (body) =>
      putRaw(body, (url, slice) => {
        const bytes = slice as unknown as Buffer
        return httpPut(url, bytes.byteLength, (outgoing) => void outgoing.end(bytes))
      })
  },
  async 'http-ceiling'() {
    const { putRaw } = await rawMultipart()
    return (body) =>
      putRaw(body, (url, slice) =>
        httpPut(url, slice.size, async (outgoing) => {
          const reader = slice.stream().getReader()
          for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
            if (!outgoing.write(chunk.value)) await new Promise((drain) => outgoing.once('drain', drain))
          }
          outgoing.end()
        }),
      )
  },
}

/** One raw node:http PUT of `length` bytes, which `write` sends; resolves with the reply's ETag. */
async function httpPut(
  url: string,
  length: number,
  write: (outgoing: ClientRequest) => void | Promise<void>,
): Promise<string> {
  const { request } = url.startsWith('https:') ? await import('node:https') : await import('node:http')
  return new Promise<string>((resolve, reject) => {
    const outgoing = request(url, { method: 'PUT', headers: { 'content-length': String(length) } }, (incoming) => {
      incoming.resume()
      incoming.on('end', () => resolve(String(incoming.headers.etag ?? '')))
    })
    outgoing.on('error', reject)
    Promise.resolve()
      .then(() => write(outgoing))
      .catch(reject)
  })
}

/**
 * The ceiling: CreateMultipartUpload, then the same slices PUT by `queueSize` plain workers with
 * presigned URLs (server/presigner.ts, tens of microseconds each), then Complete. No retries, no progress,
 * no checks: what any client must at least spend.
 */
async function rawMultipart() {
  const { createPresigner } = await import('../../server/presigner.ts')
  const { objectUrl } = await import('../../protocol/object-url.ts')
  const { target, partSize, queueSize } = spec
  const presign = createPresigner(target.credentials, target.region)
  const url = objectUrl({ ...target, forcePathStyle: true })
  const signed = (method: string, query: Record<string, string>) => presign({ method, url, query, expiresIn: 3600 })
  const putRaw = async (body: Blob, put: (url: string, slice: Blob) => Promise<string>) => {
    // A Buffer body (the *-buffer contenders) is cut into subarray views, a Blob into slices.
    const cut = (start: number, end: number) =>
      body instanceof Uint8Array ? (body.subarray(start, end) as unknown as Blob) : body.slice(start, end)
    const size = body instanceof Uint8Array ? body.byteLength : body.size
    // A body of one part goes as one PUT, as every client sends it.
    if (size <= partSize) return void (await put(await signed('PUT', {}), body))
    const created = await (await fetch(await signed('POST', { uploads: '' }), { method: 'POST' })).text()
    const uploadId = /<UploadId>([^<]+)<\/UploadId>/.exec(created)?.[1]
    if (!uploadId) throw new Error(`CreateMultipartUpload failed: ${created.slice(0, 300)}`)
    const count = Math.ceil(size / partSize)
    const etags: string[] = []
    let next = 1
    const worker = async () => {
      for (let n = next++; n <= count; n = next++) {
        etags[n - 1] = await put(
          await signed('PUT', { partNumber: String(n), uploadId }),
          cut((n - 1) * partSize, n * partSize),
        )
      }
    }
    await Promise.all(Array.from({ length: Math.min(queueSize, count) }, worker))
    const xml = `<CompleteMultipartUpload>${etags.map((etag, i) => `<Part><PartNumber>${i + 1}</PartNumber><ETag>${etag.replace(/&/g, '&amp;')}</ETag></Part>`).join('')}</CompleteMultipartUpload>`
    const completed = await fetch(await signed('POST', { uploadId }), { method: 'POST', body: xml })
    const reply = await completed.text()
    if (!completed.ok || reply.includes('<Error>'))
      throw new Error(`CompleteMultipartUpload failed: ${reply.slice(0, 300)}`)
  }
  return { putRaw }
}

function objectTarget({ target, partSize, queueSize }: ClientSpec) {
  return { ...target, forcePathStyle: true, partSize, partConcurrency: queueSize } satisfies UploadTarget &
    Record<string, unknown>
}

function apiOptions({ api, partSize, queueSize }: ClientSpec) {
  if (!api) throw new Error(`${spec.contender} needs spec.api`)
  return { api, partSize, partConcurrency: queueSize, filename: 'bench.bin', contentType: 'application/octet-stream' }
}

/** Same bytes for every contender: a 1 MiB pseudo-random block repeated (no store compresses). */
async function makeBody(): Promise<Blob> {
  if (spec.body.kind === 'file') return openAsBlob(spec.body.path)
  const block = new Uint8Array(MiB)
  let x = 2463534242
  for (let i = 0; i < block.length; i++) {
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    block[i] = x & 0xff
  }
  const blocks = Array.from({ length: Math.ceil(spec.body.size / MiB) }, () => block)
  return new Blob(blocks).slice(0, spec.body.size)
}

/** The inspector's sampling profiler (what `node --cpu-prof` runs), around the timed upload only. */
async function startProfile() {
  const { Session } = await import('node:inspector/promises')
  const session = new Session()
  session.connect()
  await session.post('Profiler.enable')
  // 200 µs between samples: ~5000 over a one-second upload (the default 1 ms gives too few).
  await session.post('Profiler.setSamplingInterval', { interval: 200 })
  await session.post('Profiler.start')
  return {
    async stop() {
      const { profile } = await session.post('Profiler.stop')
      session.disconnect()
      return profile
    },
  }
}

/** Resident set now, and the high-water mark since the last reset (Linux /proc, bytes). */
function memory() {
  const status = readFileSync('/proc/self/status', 'utf8')
  const kib = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN) * 1024
  return { rss: kib('VmRSS'), peak: kib('VmHWM') }
}

async function main(): Promise<ClientResult> {
  const run = await contenders[spec.contender]()
  const blob = await makeBody()
  // In-memory bytes as a Buffer for these; a file stays a file (updraft-stream reads it as a stream).
  const asBuffer =
    (spec.bodyAs === 'buffer' ||
      ['updraft-buffer', 'updraft-stream', 'http-ceiling-buffer'].includes(spec.contender)) &&
    spec.body.kind === 'memory'
  const body = asBuffer ? (Buffer.from(await blob.arrayBuffer()) as unknown as Blob) : blob
  // One small single-PUT upload first: lazy module loading (undici, the SDK's middleware),
  // WebCrypto's first use and JIT are one-time costs of a process, not of an upload.
  if (spec.warmUp)
    await run(
      asBuffer || spec.contender === 'updraft-stream'
        ? (Buffer.alloc(1024) as unknown as Blob)
        : new Blob([new Uint8Array(1024)]),
    )
  globalThis.gc?.()
  await new Promise((resolve) => setTimeout(resolve, 20))
  // Writing 5 resets VmHWM to the current RSS (Linux >= 4.0), so the peak below is this upload's.
  writeFileSync('/proc/self/clear_refs', '5')
  const idle = memory().rss
  const profiler = spec.profile ? await startProfile() : undefined
  const cpu = process.cpuUsage()
  const startedAt = Date.now()
  const start = performance.now()
  await run(body)
  const seconds = (performance.now() - start) / 1000
  const used = process.cpuUsage(cpu)
  if (profiler) writeFileSync(spec.profile!, JSON.stringify(await profiler.stop()))
  return {
    seconds,
    bytes: blob.size,
    cpuSeconds: (used.user + used.system) / 1e6,
    idleRss: idle,
    peakRss: memory().peak,
    startedAt,
  }
}

main().then(
  (result) => {
    process.stdout.write(`${JSON.stringify(result)}\n`)
    process.exit(0)
  },
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
    process.exit(1)
  },
)
