// Where an image is decoded and encoded: in a Web Worker when the browser can start one and draw
// there (createImageBitmap and OffscreenCanvas in workers: Chromium 69+, Firefox 105+, Safari
// 16.4+), else on the page. A 12-megapixel photo takes a few hundred milliseconds to decode, draw
// and encode (bench/images.ts): on the main thread that is input and rendering stalled.
import { type BlobWorker, startBlobWorker } from '../blob-worker.ts'
import { fitWithin } from './plan.ts'
import {
  drawSmaller,
  type ShrinkJob,
  type ShrinkOutcome,
  type ShrinkReply,
  type ShrinkRequest,
  workerSource,
} from './shrink.ts'

/** A worker left without work this long is terminated; the next image starts one again. */
export const IDLE_MS = 2000
/** A worker that neither says it runs nor fails within this is given up (never a hang). */
export const START_MS = 5000

interface Pending {
  job: ShrinkJob
  resolve(outcome: ShrinkOutcome): void
  reject(error: unknown): void
}

interface Drawer {
  worker: BlobWorker<ShrinkRequest>
  jobs: Map<number, Pending>
  starting: ReturnType<typeof setTimeout>
  idle?: ReturnType<typeof setTimeout>
}

let drawer: Drawer | undefined
let nextId = 1
/** Cleared once a worker failed (a CSP `worker-src` without blob:, no OffscreenCanvas in workers): draw here from then on. */
let workersWork = true
/** Images drawn on the page, one at a time, as the worker takes them. */
let hereTurn: Promise<unknown> = Promise.resolve()

/** `job` drawn in the page's image worker, or on the page where no worker can draw. */
export function shrinkOffThread(job: ShrinkJob): Promise<ShrinkOutcome> {
  const worker = workersWork ? (drawer ?? start()) : undefined
  if (!worker) return drawHere(job)
  return new Promise((resolve, reject) => {
    const id = nextId++
    worker.jobs.set(id, { job, resolve, reject })
    clearTimeout(worker.idle)
    try {
      worker.worker.post({ id, job })
    } catch {
      giveUp(worker)
    }
  })
}

function drawHere(job: ShrinkJob): Promise<ShrinkOutcome> {
  const drawn = hereTurn.then(() => drawSmaller(job, fitWithin))
  hereTurn = drawn.catch(() => {})
  return drawn
}

function start(): Drawer | undefined {
  const worker = startBlobWorker<ShrinkRequest, ShrinkReply>(
    workerSource(),
    (reply) => answer(started, reply),
    () => giveUp(started),
  )
  if (!worker) {
    workersWork = false
    return undefined
  }
  const started: Drawer = { worker, jobs: new Map(), starting: setTimeout(() => giveUp(started), START_MS) }
  return (drawer = started)
}

function answer(from: Drawer, reply: ShrinkReply) {
  if ('ready' in reply) return clearTimeout(from.starting)
  const pending = from.jobs.get(reply.id)
  if (!pending) return
  from.jobs.delete(reply.id)
  // A worker that could not draw (no OffscreenCanvas there): this job, and every one after it, on the page.
  if ('outcome' in reply) pending.resolve(reply.outcome)
  else {
    workersWork = false
    drawHere(pending.job).then(pending.resolve, pending.reject)
  }
  if (!from.jobs.size) from.idle = setTimeout(() => retire(from), IDLE_MS)
}

/** The worker failed: its images, and all images from now on, are drawn on the page. */
function giveUp(from: Drawer) {
  workersWork = false
  retire(from)
  for (const pending of from.jobs.values()) drawHere(pending.job).then(pending.resolve, pending.reject)
  from.jobs.clear()
}

function retire(from: Drawer) {
  clearTimeout(from.starting)
  clearTimeout(from.idle)
  if (drawer !== from) return
  drawer = undefined
  from.worker.stop()
}
