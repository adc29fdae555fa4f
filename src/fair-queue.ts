import { type Queue, UploadAbortedError } from '../engine/index.ts'

/** One upload's view of a {@link FairQueue}: the engine takes its slots through it (`options.queue`). */
export interface Lane extends Queue {
  /**
   * The upload has ended: its share goes back to the others. Requests still running finish as
   * usual; any still waiting reject with `AbortError`.
   */
  close(): void
}

/**
 * A connection budget shared fairly by uploads. Each upload runs in a lane; lanes are served in
 * the order they opened (the order files were picked), and a lane holds more than its share
 * (`connections / open lanes`, at least 1) only when no other lane is asking for its own. One
 * connection stays free for each lane that has not asked yet (its upload is still waiting for
 * the upload API's reply), so a small file picked before a large one starts at once instead of
 * waiting for one of the large one's parts to finish. Otherwise no connection idles while a
 * request waits.
 */
export interface FairQueue extends Queue {
  lane(): Lane
}

interface Waiter {
  start(): void
  cancel(): void
}

interface LaneState {
  running: number
  waiting: Waiter[]
  /** Whether it has asked for a connection yet. */
  asked: boolean
}

export function createFairQueue(connections: number): FairQueue {
  if (!Number.isInteger(connections) || connections < 1) {
    throw new RangeError(`updraft: connections must be a whole number of at least 1, got ${connections}`)
  }
  let running = 0
  const lanes: LaneState[] = []

  const share = () => Math.max(1, Math.floor(connections / lanes.length))

  /** Which lane gets the next free slot, if any should. */
  function next(): LaneState | undefined {
    const asking = lanes.filter((lane) => lane.waiting.length > 0)
    const underShare = asking.find((lane) => lane.running < share())
    if (underShare) return underShare
    // One slot kept for each lane that has not asked yet: its first request starts at once.
    const reserved = lanes.filter((lane) => !lane.asked).length
    if (connections - running <= reserved) return undefined
    return asking.reduce<LaneState | undefined>(
      (best, lane) => (!best || lane.running < best.running ? lane : best),
      undefined,
    )
  }

  function pump() {
    for (let lane = next(); lane && running < connections; lane = next()) {
      running++
      lane.running++
      lane.waiting.shift()!.start()
    }
  }

  function open(): Lane {
    const state: LaneState = { running: 0, waiting: [], asked: false }
    lanes.push(state)
    let closed = false
    return {
      async run(task, signal) {
        if (signal?.aborted) throw new UploadAbortedError()
        await new Promise<void>((resolve, reject) => {
          const cancel = () => {
            state.waiting.splice(state.waiting.indexOf(waiter), 1)
            reject(new UploadAbortedError())
          }
          const waiter: Waiter = {
            start() {
              signal?.removeEventListener('abort', cancel)
              resolve()
            },
            cancel,
          }
          state.waiting.push(waiter)
          state.asked = true
          signal?.addEventListener('abort', cancel, { once: true })
          pump()
        })
        try {
          return await task()
        } finally {
          running--
          state.running--
          pump()
        }
      },
      close() {
        if (closed) return
        closed = true
        lanes.splice(lanes.indexOf(state), 1)
        // Nothing waits forever in a lane no one serves any more.
        for (const waiter of state.waiting.slice()) waiter.cancel()
        pump()
      },
    }
  }

  return {
    lane: open,
    // Used as a plain Queue (an engine call given this queue directly): one lane per request.
    async run(task, signal) {
      const lane = open()
      try {
        return await lane.run(task, signal)
      } finally {
        lane.close()
      }
    },
  }
}

export const isFairQueue = (queue: Queue): queue is FairQueue =>
  typeof (queue as Partial<FairQueue>).lane === 'function'
