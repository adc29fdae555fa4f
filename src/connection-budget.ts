import type { Queue, UploadOptions, UploadResult } from '../engine/index.ts'
import { MAX_BATCH_FILES, MIN_PART_SIZE } from '../protocol/limits.ts'
import { BatchingPauseController } from './batch-api.ts'
import { createFairQueue, type FairQueue, isFairQueue } from './fair-queue.ts'
import { createStartWindow, type StartWindow, takeStart } from './start-window.ts'
import type { Uploader } from './uploader.ts'

/**
 * Connections to storage a page keeps open at once, all files together: what a browser opens per
 * host on HTTP/1.1 (AWS S3 and R2 speak it), so single-PUT files use every one; a large file's
 * parts take them fairly with the others (src/fair-queue.ts).
 */
export const PAGE_CONNECTIONS = 6

/**
 * Shared by every hook on the page that is not given its own `queue`: files share it fairly, in
 * the order they were picked (src/fair-queue.ts).
 */
export const pageQueue: FairQueue = createFairQueue(PAGE_CONNECTIONS)

/**
 * Uploads started at once per connection queue; the queue's slots bound what they send to storage,
 * not their API round trips. A file of one PUT costs the upload API a presigned URL or a token until
 * it is sent: 200 are started ahead, let in 100 at a time so they are asked for in one `/batch`
 * (src/batch-api.ts), few enough that none waits long enough for its URL to expire. A multipart
 * file costs a multipart upload (or an hour-long token) that stays on storage if the page closes:
 * 4 at a time, each running its parts through the queue.
 */
const SMALL_AHEAD = 2 * MAX_BATCH_FILES
const LARGE_AHEAD = 4
const startedUploads = new WeakMap<Queue, { small: StartWindow; large: StartWindow }>()

/**
 * Runs one upload inside the page's connection budget: the engine takes a slot of `queue` for
 * every request that carries bytes (a single PUT or each part), so N files never open more
 * than the budget's connections to storage, while asking and confirming (in batches) happen
 * outside the slots. With a fair queue (the default), each upload gets a lane of its own, so the
 * budget is shared fairly.
 */
export function uploadWithinBudget(
  upload: Uploader,
  file: File,
  options: UploadOptions,
  queue: Queue,
): Promise<UploadResult> {
  let windows = startedUploads.get(queue)
  if (!windows) {
    windows = { small: createStartWindow(SMALL_AHEAD, MAX_BATCH_FILES), large: createStartWindow(LARGE_AHEAD) }
    startedUploads.set(queue, windows)
  }
  const window = file.size <= (options.partSize ?? MIN_PART_SIZE) ? windows.small : windows.large
  // The upload starts in this call when it may (no tick in between).
  return new Promise((resolve, reject) =>
    window.take(options.signal, (release) => void runStarted(release).then(resolve, reject), reject),
  )

  async function runStarted(firstRelease: () => void): Promise<UploadResult> {
    const { signal, pauseSignal } = options
    let release = firstRelease
    // A paused upload gives its start back (pausing big files lets a waiting one start), and
    // takes one again before it runs on: the engine stays paused until then. Its pause signal
    // also has it ask and confirm in batches with the others (src/batch-api.ts).
    const engine = new BatchingPauseController()
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
          release = await takeStart(window, signal)
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
