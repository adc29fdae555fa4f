import { callBack } from './callback.ts'
import type { Progress } from './options.ts'

/**
 * Sums bytes in flight per part and reports the running total, only upwards: a part that is
 * retried starts again from 0 without the total going back or counting twice. Sent is not
 * stored: until `done()` (storage confirmed the whole upload) the total is held one byte short,
 * so a bar never shows 100% for bytes whose reply was an error, or before Complete. `total` is
 * asked at each report: a stream of unknown length reports the bytes read from it so far.
 */
export function trackProgress(total: () => number, onProgress?: (progress: Progress) => void): ProgressTracker {
  /** Bytes of finished parts plus bytes in flight: kept as a running sum, O(1) per event. */
  let loaded = 0
  let reported = -1
  const inFlight = new Map<number, number>()
  const report = (bytes: number) => {
    if (bytes > reported) callBack(onProgress, { loaded: (reported = bytes), total: total() })
  }
  const sent = (partNumber: number, bytes: number) => {
    loaded += bytes - (inFlight.get(partNumber) ?? 0)
    inFlight.set(partNumber, bytes)
    report(Math.min(loaded, total() - 1))
  }
  return {
    sent,
    // A finished part counts as all its bytes sent, and leaves the in-flight set.
    finished(partNumber: number, bytes: number) {
      sent(partNumber, bytes)
      inFlight.delete(partNumber)
    },
    done: () => report(total()),
  }
}

/** What {@link trackProgress} answers: the part loop and the single PUT report through it. */
export interface ProgressTracker {
  /** Part `partNumber` (1 for a single PUT) has `bytes` sent so far; 0 again when it starts over. */
  sent(partNumber: number, bytes: number): void
  /** Part `partNumber` is stored: all its `bytes` count, and it leaves the parts in flight. */
  finished(partNumber: number, bytes: number): void
  /** Storage confirmed the whole upload: the total is reported. */
  done(): void
}
