/** At most ten re-renders a second per file: smooth enough for a bar, cheap for a list of hundreds. */
export const PROGRESS_INTERVAL_MS = 100

export interface ProgressThrottle {
  /** A new byte count: emitted now if the last emit is at least one interval old, else at the interval's end. */
  push(uploaded: number): void
  /** Emits a pending value at once (before the upload's final state lands). */
  flush(): void
  /** Drops a pending value and its timer. */
  cancel(): void
}

/**
 * Leading and trailing throttle: the first value shows at once, a burst collapses into one
 * emit per interval, and the last value of a burst always lands — however fast the transport
 * fires (XHR can fire hundreds of progress events a second on a fast link).
 */
export function createProgressThrottle(
  emit: (uploaded: number) => void,
  interval = PROGRESS_INTERVAL_MS,
): ProgressThrottle {
  let lastEmit = -Infinity
  let pending: number | undefined
  let timer: ReturnType<typeof setTimeout> | undefined

  const fire = () => {
    timer = undefined
    if (pending === undefined) return
    const value = pending
    pending = undefined
    lastEmit = Date.now()
    emit(value)
  }

  return {
    push(uploaded) {
      pending = uploaded
      if (timer !== undefined) return
      const wait = lastEmit + interval - Date.now()
      if (wait <= 0) fire()
      else timer = setTimeout(fire, wait)
    },
    flush() {
      clearTimeout(timer)
      fire()
    },
    cancel() {
      clearTimeout(timer)
      timer = undefined
      pending = undefined
    },
  }
}
