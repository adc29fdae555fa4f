// Where a body is hashed: in a worker when the runtime can start one (a Web Worker in browsers, a
// worker_threads worker in Node), else on the calling thread. A part's hash is a CPU-bound loop
// of milliseconds to tens of them (8 MiB of SHA-256: 13-17 ms in Chromium, whose WebCrypto digests
// on the calling thread; MD5 is slower): on a page's main thread it stalls input and rendering,
// and in Node it takes the thread node:http's upload runs on.
import { type HashWorker, startWorker } from '#hash-worker'
import { type ChecksumAlgorithm, digest } from './digest.ts'
import type { HashReply } from './hash-worker.ts'

/** Bodies smaller than this are hashed where they are: under a millisecond, less than a worker's round trip. */
export const IN_PLACE_BELOW = 64 * 1024
/**
 * Workers at most, shared by every upload of the page or process. Two, not one per part in
 * flight: parts are hashed as their turn comes (partConcurrency at the start, then one as each is
 * sent), so two keep ahead of the network while leaving cores to the browser's network process
 * and the page (or to node:http's thread).
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
  worker: HashWorker
  jobs: Map<number, Job>
  /** Until the worker says it runs. */
  starting: ReturnType<typeof setTimeout>
  /** While it has no work. */
  idle?: ReturnType<typeof setTimeout>
}

const hashers: Hasher[] = []
let nextId = 1
/** Cleared once a worker failed (a CSP `worker-src` without blob:, a runtime without such workers): hash here from then on. */
let workersWork = true

/** The digest of `body`, computed in a worker when the runtime has them, else on this thread. */
export function hashBody(algorithm: ChecksumAlgorithm, body: Blob | Uint8Array): Promise<Uint8Array> {
  const size = body instanceof Uint8Array ? body.byteLength : body.size
  const hasher = size >= IN_PLACE_BELOW && workersWork ? pick() : undefined
  if (!hasher) return hashHere(algorithm, body)
  return new Promise((resolve, reject) => {
    const id = nextId++
    hasher.jobs.set(id, { algorithm, body, resolve, reject })
    clearTimeout(hasher.idle)
    hasher.worker.busy(true)
    // A Uint8Array is copied (a memcpy, a few percent of a hash) so the engine keeps sending its
    // own; posted whole, a view into a larger buffer would clone all of that buffer. `new
    // Uint8Array(view)` copies whatever the subclass: a Node Buffer's `slice()` is a view, and
    // transferring its memory detached the caller's Buffer (the part then went out empty).
    const sent = body instanceof Uint8Array ? new Uint8Array(body) : body
    try {
      hasher.worker.post({ id, algorithm, body: sent }, sent instanceof Uint8Array ? [sent.buffer] : [])
    } catch {
      giveUp(hasher)
    }
  })
}

const hashHere = (algorithm: ChecksumAlgorithm, body: Blob | Uint8Array) =>
  body instanceof Uint8Array
    ? digest(algorithm, body)
    : body.arrayBuffer().then((buffer) => digest(algorithm, new Uint8Array(buffer)))

/** A timer that does not hold a Node process open (browsers' timers are numbers, with nothing to unref). */
const timer = (run: () => void, ms: number) => {
  const handle = setTimeout(run, ms)
  ;(handle as { unref?: () => void }).unref?.()
  return handle
}

/** The least busy worker, or a new one while under {@link MAX_WORKERS} and every one is busy. */
function pick(): Hasher | undefined {
  const idlest = hashers.reduce<Hasher | undefined>(
    (best, hasher) => (!best || hasher.jobs.size < best.jobs.size ? hasher : best),
    undefined,
  )
  return idlest && (idlest.jobs.size === 0 || hashers.length >= MAX_WORKERS) ? idlest : (start() ?? idlest)
}

function start(): Hasher | undefined {
  const worker = startWorker(
    (reply) => answer(hasher, reply),
    () => giveUp(hasher),
  )
  if (!worker) {
    workersWork = false
    return undefined
  }
  const hasher: Hasher = { worker, jobs: new Map(), starting: timer(() => giveUp(hasher), START_MS) }
  hashers.push(hasher)
  return hasher
}

function answer(hasher: Hasher, reply: HashReply) {
  if ('ready' in reply) return clearTimeout(hasher.starting)
  const job = hasher.jobs.get(reply.id)
  if (!job) return
  hasher.jobs.delete(reply.id)
  // A body the worker could not read or hash is read here again: its error, if it fails again, is this thread's own.
  if ('digest' in reply) job.resolve(reply.digest)
  else hashHere(job.algorithm, job.body).then(job.resolve, job.reject)
  if (hasher.jobs.size) return
  hasher.worker.busy(false)
  hasher.idle = timer(() => retire(hasher), IDLE_MS)
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
  const at = hashers.indexOf(hasher)
  if (at < 0) return
  hashers.splice(at, 1)
  hasher.worker.stop()
}
