import type { Queue, UploadOptions, UploadResult } from '../engine/index.ts'
import { createQueue, PauseController } from '../engine/index.ts'
import { createFairQueue, type FairQueue, isFairQueue } from './fair-queue.ts'
import type { Uploader } from './uploader.ts'

/** Connections to storage a page keeps open at once, all files together (the engine's own partConcurrency default). */
export const PAGE_CONNECTIONS = 4

/**
 * Shared by every hook on the page that is not given its own `queue`: files share it fairly, in
 * the order they were picked (src/fair-queue.ts).
 */
export const pageQueue: FairQueue = createFairQueue(PAGE_CONNECTIONS)

/**
 * Files started at once per connection queue. Without it, 100 large files would make the
 * endpoint create 100 multipart uploads (or issue 100 hour-long tokens) up front, most waiting
 * idle for a connection, and all left behind on storage if the page closes.
 */
const startedUploads = new WeakMap<Queue, Queue>()

/**
 * Runs one upload inside the page's connection budget: the engine takes a slot of `queue` for
 * every request that carries bytes (a single PUT or each part), so N files never open more
 * than the budget's connections to storage. With a fair queue (the default), each upload gets a
 * lane of its own, so the budget is shared fairly.
 */
export function uploadWithinBudget(upload: Uploader, file: File, options: UploadOptions, queue: Queue): Promise<UploadResult> {
  let started = startedUploads.get(queue)
  if (!started) startedUploads.set(queue, (started = createQueue(PAGE_CONNECTIONS)))
  const slots = started
  // The upload starts inside the slot's task, at once when one is free (no tick in between).
  return new Promise((resolve, reject) => {
    slots.run(() => new Promise<void>((release) => void runInSlot(release).then(resolve, reject)), options.signal).catch(reject)
  })

  async function runInSlot(firstRelease: () => void): Promise<UploadResult> {
    const { signal, pauseSignal } = options
    let release = firstRelease
    // A paused upload gives its start slot back (pausing big files lets a waiting one start), and
    // takes one again before it runs on: the engine stays paused until then.
    const engine = new PauseController()
    let turns: Promise<unknown> = Promise.resolve()
    const onPause = () => {
      engine.pause()
      turns = turns.then(() => {
        release()
        release = () => {}
      })
    }
    const onResume = () => {
      turns = turns
        .then(async () => {
          release = await takeSlot(slots, signal)
          if (!pauseSignal?.paused) engine.resume()
        })
        .catch(() => {})
    }
    pauseSignal?.addEventListener('pause', onPause)
    pauseSignal?.addEventListener('resume', onResume)
    // Paused while it waited for its turn: it starts paused, and lets the slot go at once.
    if (pauseSignal?.paused) onPause()
    const lane = isFairQueue(queue) ? queue.lane() : undefined
    try {
      return await upload(file, { ...options, queue: lane ?? queue, pauseSignal: engine.signal })
    } finally {
      pauseSignal?.removeEventListener('pause', onPause)
      pauseSignal?.removeEventListener('resume', onResume)
      lane?.close()
      void turns.then(() => release())
    }
  }
}

/** Waits for a slot of `queue` and holds it until the returned function is called. */
function takeSlot(queue: Queue, signal?: AbortSignal): Promise<() => void> {
  return new Promise((resolve, reject) => {
    queue.run(() => new Promise<void>((release) => resolve(release)), signal).catch(reject)
  })
}
