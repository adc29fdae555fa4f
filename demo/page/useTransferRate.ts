import { useEffect, useRef, useState } from 'react'

/**
 * Average bytes per second since the first progress report of one upload. `uploaded` changes
 * at most ~10 times a second (the hook throttles it), so one state update per change is cheap.
 * undefined until two reports are at least 200 ms apart: a rate from one burst would be noise.
 */
export function useTransferRate(uploaded: number, started: boolean): number | undefined {
  const first = useRef<{ at: number; bytes: number } | undefined>(undefined)
  const [rate, setRate] = useState<number>()

  useEffect(() => {
    if (!started) return
    const now = performance.now()
    if (!first.current) {
      first.current = { at: now, bytes: uploaded }
      return
    }
    const seconds = (now - first.current.at) / 1000
    if (seconds >= 0.2) setRate((uploaded - first.current.bytes) / seconds)
  }, [uploaded, started])

  return rate
}
