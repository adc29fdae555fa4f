import { useEffect, useRef, useState } from 'react'
import type { UploadEntry } from '../upload-list.ts'

/**
 * Speed over the last 10 s, so a time left follows the link as it is now. Not shorter: Firefox
 * reports an upload's progress in steps of megabytes as socket buffers drain (8 MiB every 4 s on a
 * 2 MiB/s link), and a 5 s window swung from 0.25x to 1.85x the link's speed with them.
 */
const WINDOW_MS = 10_000
const SAMPLE_MS = 1000
/**
 * Samples in which the count must have grown, once it first moved, before a speed is told. A
 * browser that reports progress in coarse steps (Firefox: the first event after megabytes, then
 * bursts as socket buffers drain) showed "0 B/s" one second after Resume, and a rate of a few
 * bytes a second ("24596 h 10 min left") from a count that had crept up by one step. Not in a row:
 * through a relay that buffers (and in Firefox) the count grows every other second, and a rule of
 * two in a row told no speed for a whole 48 MiB upload.
 */
const SETTLE_SAMPLES = 2

const NONE: ReadonlyMap<string, number> = new Map()

/**
 * Each moving upload's speed in bytes per second, by entry id: sampled once a second over the last
 * 10 s, for the entries `moving` picks (uploading, not paused, offline or finishing). An entry has
 * no speed until its bytes have moved for a while (see {@link createRateMeter}); one that stops
 * moving (paused, ended) loses its speed and starts afresh when it moves again. One timer for the
 * whole list, so the summary's time left and a row's are computed from the very same figures.
 */
export function useTransferRates(
  entries: UploadEntry[],
  moving: (entry: UploadEntry) => boolean,
): ReadonlyMap<string, number> {
  const latest = useRef(entries)
  latest.current = entries
  const meters = useRef(new Map<string, RateMeter>())
  const [rates, setRates] = useState(NONE)
  const movingIds = entries
    .filter(moving)
    .map((entry) => entry.id)
    .join(' ')

  useEffect(() => {
    const ids = new Set(movingIds ? movingIds.split(' ') : [])
    for (const id of meters.current.keys()) if (!ids.has(id)) meters.current.delete(id)
    const start = performance.now()
    for (const entry of latest.current) {
      if (ids.has(entry.id) && !meters.current.has(entry.id))
        meters.current.set(entry.id, createRateMeter(start, entry.uploaded))
    }
    const kept = (previous: ReadonlyMap<string, number>) => new Map([...previous].filter(([id]) => ids.has(id)))
    setRates((previous) => (previous.size === 0 ? previous : kept(previous)))
    if (ids.size === 0) return
    const timer = setInterval(() => {
      const now = performance.now()
      const sampled = new Map<string, number>()
      for (const entry of latest.current) {
        const rate = meters.current.get(entry.id)?.(now, entry.uploaded)
        if (rate !== undefined) sampled.set(entry.id, rate)
      }
      setRates(sampled.size === 0 ? NONE : sampled)
    }, SAMPLE_MS)
    return () => clearInterval(timer)
  }, [movingIds])

  return rates
}

interface Sample {
  at: number
  bytes: number
}

export type RateMeter = (at: number, bytes: number) => number | undefined

/**
 * The sampling behind useTransferRates, apart from React and timers: call it once a sample with
 * the time (ms) and the count; it answers bytes per second, or undefined until a real speed is
 * known. After Resume the engine first re-sends the parts Pause cancelled, and the count stands
 * still for seconds, then starts mid-sample: a window that opened before it moved would give a
 * rate far below the link's (16 KiB/s and "23 min left" on a 2 MiB/s link), so the window opens at
 * the first sample that shows growth, and a speed is told once the count has grown in
 * {@link SETTLE_SAMPLES} samples since, in a row or not (a still sample right after the first step opens
 * it again). Once told, a stall shows as a falling rate, not a frozen one.
 */
export function createRateMeter(at: number, bytes: number): RateMeter {
  let waiting: Sample | undefined = { at, bytes }
  let samples: Sample[] = []
  let grew = 0
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
    if (count > samples.at(-1)!.bytes) grew++
    else if (grew === 0) {
      // The first step, then nothing (a count that crept up by one event): the window opens again
      // here, so that wait is not counted in the speed.
      samples = [{ at: now, bytes: count }]
      return undefined
    }
    samples.push({ at: now, bytes: count })
    while (samples.length > 2 && now - samples[0]!.at > WINDOW_MS) samples.shift()
    if (grew < SETTLE_SAMPLES) return undefined
    const oldest = samples[0]!
    return Math.max(0, (count - oldest.bytes) / ((now - oldest.at) / 1000))
  }
}
