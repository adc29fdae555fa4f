import { useEffect, useRef, useState } from 'react'

/** Speed over the last few seconds, so a time left follows the link as it is now. */
const WINDOW_MS = 5000
const SAMPLE_MS = 1000

/**
 * Bytes per second of `bytes` (a growing count) over the last 5 s, sampled once a second while
 * `active`; undefined until bytes have moved for one whole sample. After Resume the engine first
 * re-sends the parts Pause cancelled, and the count stands still for seconds, then starts mid-sample:
 * a window that opened before it moved would give a rate far below the link's (16 KiB/s and
 * "23 min left" on a 2 MiB/s link), so the window opens at the first sample that shows growth.
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
    const meter = createRateMeter(performance.now(), latest.current)
    const timer = setInterval(() => {
      const next = meter(performance.now(), latest.current)
      if (next !== undefined) setRate(next)
    }, SAMPLE_MS)
    return () => clearInterval(timer)
  }, [active])

  return rate
}

interface Sample {
  at: number
  bytes: number
}

/**
 * The sampling behind useTransferRate, apart from React and timers: call it once a sample with the
 * time (ms) and the count; it answers bytes per second, or undefined while no whole sample of
 * moving bytes has been seen.
 */
export function createRateMeter(at: number, bytes: number): (at: number, bytes: number) => number | undefined {
  let waiting: Sample | undefined = { at, bytes }
  let samples: Sample[] = []
  return (now, count) => {
    if (waiting) {
      // Still or going back (a re-sent part starts again from 0): the window has not opened.
      if (count <= waiting.bytes) {
        waiting = { at: now, bytes: count }
        return undefined
      }
      waiting = undefined
      samples = [{ at: now, bytes: count }]
      return undefined
    }
    samples.push({ at: now, bytes: count })
    while (samples.length > 2 && now - samples[0]!.at > WINDOW_MS) samples.shift()
    const oldest = samples[0]!
    return Math.max(0, (count - oldest.bytes) / ((now - oldest.at) / 1000))
  }
}
