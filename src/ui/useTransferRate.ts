import { useEffect, useRef, useState } from 'react'

/** Speed over the last few seconds, so a time left follows the link as it is now. */
const WINDOW_MS = 5000
const SAMPLE_MS = 1000

/**
 * Bytes per second of `bytes` (a growing count) over the last 5 s, sampled once a second while
 * `active`; undefined until the count has grown since `active` turned on. The window opens at the
 * last sample before the first growth: after Resume the engine re-sends the parts Pause cancelled,
 * and the count stands still for seconds, which is not a speed of 0 B/s (nor an hour left).
 * Once bytes have moved, a stall shows as a falling rate, not a frozen one.
 */
export function useTransferRate(bytes: number, active: boolean): number | undefined {
  const latest = useRef(bytes)
  latest.current = bytes
  const [rate, setRate] = useState<number>()

  useEffect(() => {
    if (!active) {
      setRate(undefined)
      return
    }
    let samples = [{ at: performance.now(), bytes: latest.current }]
    const timer = setInterval(() => {
      const now = performance.now()
      const first = samples[0]!
      if (samples.length === 1 && latest.current === first.bytes) {
        samples = [{ at: now, bytes: latest.current }]
        return
      }
      samples.push({ at: now, bytes: latest.current })
      while (samples.length > 2 && now - samples[0]!.at > WINDOW_MS) samples.shift()
      const oldest = samples[0]!
      setRate(Math.max(0, (latest.current - oldest.bytes) / ((now - oldest.at) / 1000)))
    }, SAMPLE_MS)
    return () => clearInterval(timer)
  }, [active])

  return rate
}
