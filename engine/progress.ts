import { callBack } from './callback.ts'
import type { Progress } from './options.ts'

/**
 * Sums bytes in flight per part and reports the running total, only upwards: a part that is
 * retried starts again from 0 without the total going back or counting twice. Sent is not
 * stored: until `done()` (storage confirmed the whole upload) the total is held one byte short,
 * so a bar never shows 100% for bytes whose reply was an error, or before Complete.
 */
export function trackProgress(total: number, onProgress?: (progress: Progress) => void) {
  let finished = 0
  let reported = -1
  const inFlight = new Map<number, number>()
  const report = (loaded: number) => {
    if (loaded > reported) callBack(onProgress, { loaded: (reported = loaded), total })
  }
  const update = () => {
    let loaded = finished
    for (const bytes of inFlight.values()) loaded += bytes
    report(Math.min(loaded, total - 1))
  }
  return {
    sent(partNumber: number, bytes: number) {
      inFlight.set(partNumber, bytes)
      update()
    },
    finished(partNumber: number, bytes: number) {
      inFlight.delete(partNumber)
      finished += bytes
      update()
    },
    done: () => report(total),
  }
}
