import { UploadAbortedError } from '../core/errors.ts'
import type { Queue } from '../core/options.ts'

export type { Queue } from '../core/options.ts'

/**
 * A connection budget several uploads share: pass it as the `queue` option of each, and every
 * request that carries bytes (a single PUT, each part) takes one of its `concurrency` slots, so a
 * page with many files never has more than that many requests to storage in flight.
 *
 * @param concurrency - Slots: requests in flight at once across every upload given this queue.
 * @throws `RangeError` when `concurrency` is not a whole number of at least 1.
 * @example
 * ```ts
 * import { createQueue, upload } from 'updraft-s3'
 *
 * const queue = createQueue(4) // 4 connections to storage for the whole page
 * await Promise.all(files.map((file) => upload(file, { queue })))
 * ```
 */
export function createQueue(concurrency: number): Queue {
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new RangeError(
      `updraft: createQueue(concurrency): concurrency must be a whole number of at least 1, got ${concurrency}`,
    )
  }
  let running = 0
  const waiting: Array<() => void> = []
  return {
    async run(task, signal) {
      if (signal?.aborted) throw new UploadAbortedError()
      if (running < concurrency) running++
      else await waitForSlot(waiting, signal)
      try {
        return await task()
      } finally {
        // Hand the slot straight to the next waiter: releasing it first would let a newcomer
        // take it before the waiter wakes, and both would run.
        const next = waiting.shift()
        if (next) next()
        else running--
      }
    },
  }
}

function waitForSlot(waiting: Array<() => void>, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const start = () => {
      signal?.removeEventListener('abort', cancel)
      resolve()
    }
    const cancel = () => {
      waiting.splice(waiting.indexOf(start), 1)
      reject(new UploadAbortedError())
    }
    waiting.push(start)
    signal?.addEventListener('abort', cancel, { once: true })
  })
}

/**
 * Runs `task` on each item `next()` hands out, with at most `limit` in flight, taking the next
 * item the moment one settles (so a stream is read only as slots free up). Stops taking items
 * after a failure and rejects with it.
 */
export async function runPool<T>(
  limit: number,
  next: () => T | undefined | Promise<T | undefined>,
  task: (item: T) => Promise<void>,
): Promise<void> {
  let failed = false
  const worker = async () => {
    try {
      for (let item: T | undefined; !failed && (item = await next()) !== undefined; ) await task(item)
    } catch (error) {
      failed = true
      throw error
    }
  }
  await Promise.all(Array.from({ length: limit }, worker))
}
