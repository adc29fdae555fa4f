import { UploadAbortedError } from './errors.ts'

/** A counting semaphore: at most `concurrency` tasks run at once; others wait their turn in order. */
export interface Queue {
  run<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T>
}

export function createQueue(concurrency: number): Queue {
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new RangeError(`updraft: queueSize must be a whole number of at least 1, got ${concurrency}`)
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
 * Runs `task(1) … task(count)` with at most `limit` in flight, starting the next the moment one
 * settles. Stops starting new tasks after a failure and rejects with it.
 */
export async function runPool(count: number, limit: number, task: (n: number) => Promise<void>): Promise<void> {
  let next = 1
  let failed = false
  const worker = async () => {
    while (!failed && next <= count) {
      try {
        await task(next++)
      } catch (error) {
        failed = true
        throw error
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, count) }, worker))
}
