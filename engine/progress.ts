import type { Progress } from './options.ts'

/**
 * Sums bytes in flight per part and reports the running total, only upwards: a part that is
 * retried starts again from 0 without the total going back or counting twice.
 */
export function trackProgress(total: number, onProgress?: (progress: Progress) => void) {
  let finished = 0
  let reported = -1
  const inFlight = new Map<number, number>()
  const report = () => {
    let loaded = finished
    for (const bytes of inFlight.values()) loaded += bytes
    if (loaded > reported && onProgress) onProgress({ loaded: Math.min((reported = loaded), total), total })
  }
  return {
    sent(partNumber: number, bytes: number) {
      inFlight.set(partNumber, bytes)
      report()
    },
    finished(partNumber: number, bytes: number) {
      inFlight.delete(partNumber)
      finished += bytes
      report()
    },
  }
}
