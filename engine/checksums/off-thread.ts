// Where a body is hashed: in a worker when the page can start one, else on the calling thread.
// A part's hash is a CPU-bound loop of tens of milliseconds (8 MiB of MD5 at ~60 MB/s in Chromium
// here): on a page's main thread it stalls input and rendering and halves throughput
// (bench/browser.ts's checksum table), so in a browser the parts go to a worker.
import { type ChecksumAlgorithm, digest } from './digest.ts'
import { type HashReply, type HashRequest, workerSource } from './worker.ts'

/** Bodies smaller than this are hashed where they are: under a millisecond, less than a worker's round trip. */
export const IN_PLACE_BELOW = 64 * 1024
/**
 * Workers at most, shared by every upload of the page. Two, not one per part in flight: parts
 * are hashed as their turn comes (queueSize at the start, then one as each is sent), so two keep
 * ahead of the network while leaving cores to the browser's network process and the page.
 */
export const MAX_WORKERS = 2
/** A worker left without work this long is terminated; the next body starts one again. */
export const IDLE_MS = 2000
/** A worker that neither says it runs nor fails within this is given up (never a hang). */
export const START_MS = 5000

interface Job {
  algorithm: ChecksumAlgorithm
  body: Blob | Uint8Array
  resolve(digest: Uint8Array): void
  reject(error: unknown): void
}

interface Hasher {
  worker: Worker
  url: string
  jobs: Map<number, Job>
  /** Until the worker says it runs. */
  starting: ReturnType<typeof setTimeout>
  /** While it has no work. */
  idle?: ReturnType<typeof setTimeout>
}

const hashers: Hasher[] = []
let nextId = 1
/** Cleared once a worker failed (a CSP `worker-src` without blob:, a runtime without classic workers): hash here from then on. */
let workersWork = true

/** The digest of `body`, computed in a worker when the runtime has them (browsers), else on this thread. */
export function hashBody(algorithm: ChecksumAlgorithm, body: Blob | Uint8Array): Promise<Uint8Array> {
  const size = body instanceof Uint8Array ? body.byteLength : body.size
  const hasher = size >= IN_PLACE_BELOW && workersWork && typeof Worker === 'function' ? pick() : undefined
  if (!hasher) return hashHere(algorithm, body)
  return new Promise((resolve, reject) => {
    const id = nextId++
    hasher.jobs.set(id, { algorithm, body, resolve, reject })
    clearTimeout(hasher.idle)
    // A Uint8Array is copied (a memcpy, a few percent of a hash) so the engine keeps sending its
    // own; posted whole, a view into a larger buffer would clone all of that buffer.
    const sent = body instanceof Uint8Array ? body.slice() : body
    try {
      hasher.worker.postMessage({ id, algorithm, body: sent } satisfies HashRequest, sent instanceof Uint8Array ? [sent.buffer] : [])
    } catch {
      giveUp(hasher)
    }
  })
}

const hashHere = (algorithm: ChecksumAlgorithm, body: Blob | Uint8Array) =>
  body instanceof Uint8Array ? digest(algorithm, body) : body.arrayBuffer().then((buffer) => digest(algorithm, new Uint8Array(buffer)))

/** The least busy worker, or a new one while under {@link MAX_WORKERS} and every one is busy. */
function pick(): Hasher | undefined {
  const idlest = hashers.reduce<Hasher | undefined>((best, hasher) => (!best || hasher.jobs.size < best.jobs.size ? hasher : best), undefined)
  return idlest && (idlest.jobs.size === 0 || hashers.length >= MAX_WORKERS) ? idlest : (start() ?? idlest)
}

function start(): Hasher | undefined {
  let url: string | undefined
  let worker: Worker
  try {
    url = URL.createObjectURL(new Blob([workerSource()], { type: 'text/javascript' }))
    worker = new Worker(url)
  } catch {
    // Older browsers throw a SecurityError here for a CSP that forbids blob: workers.
    if (url) URL.revokeObjectURL(url)
    workersWork = false
    return undefined
  }
  const hasher: Hasher = { worker, url, jobs: new Map(), starting: setTimeout(() => giveUp(hasher), START_MS) }
  worker.onmessage = ({ data }: MessageEvent<HashReply>) => {
    if ('ready' in data) return clearTimeout(hasher.starting)
    const job = hasher.jobs.get(data.id)
    if (!job) return
    hasher.jobs.delete(data.id)
    // A body the worker could not read or hash is read here again: its error, if it fails again, is the page's own.
    if ('digest' in data) job.resolve(data.digest)
    else hashHere(job.algorithm, job.body).then(job.resolve, job.reject)
    if (!hasher.jobs.size) hasher.idle = setTimeout(() => retire(hasher), IDLE_MS)
  }
  // Chromium reports a CSP refusal of the blob: URL here, as an error event, after the constructor returned.
  worker.onerror = (event) => {
    event.preventDefault()
    giveUp(hasher)
  }
  worker.onmessageerror = () => giveUp(hasher)
  hashers.push(hasher)
  return hasher
}

/** A worker failed: its bodies, and all bodies from now on, are hashed here. */
function giveUp(hasher: Hasher) {
  workersWork = false
  retire(hasher)
  for (const job of hasher.jobs.values()) hashHere(job.algorithm, job.body).then(job.resolve, job.reject)
  hasher.jobs.clear()
}

function retire(hasher: Hasher) {
  clearTimeout(hasher.starting)
  clearTimeout(hasher.idle)
  hasher.worker.terminate()
  URL.revokeObjectURL(hasher.url)
  const at = hashers.indexOf(hasher)
  if (at >= 0) hashers.splice(at, 1)
}
