import { UploadAbortedError } from '../engine/index.ts'

/** How many uploads of one kind a queue has started, and lets start. */
export interface StartWindow {
  /**
   * Calls `start` once the upload may start (at once, in this call, when it may), with the
   * function that gives the start back (once); or `cancelled` with `AbortError` when `signal`
   * aborts first.
   */
  take(signal: AbortSignal | undefined, start: (release: () => void) => void, cancelled: (error: Error) => void): void
}

/**
 * At most `size` uploads started at once, let in `refill` at a time: once `size` have started,
 * the next start only when `size − refill` or fewer run, and then as many as fit at once. Files
 * let in together ask the upload API together (src/batch-api.ts), so a window of 200 refilled by
 * 100 makes one `/batch` request per 100 files rather than one each time a file ends.
 */
export function createStartWindow(size: number, refill = 1): StartWindow {
  let started = 0
  /** Letting uploads in: until `size` run, then again once `size − refill` or fewer do. */
  let open = true
  const waiting: Array<() => void> = []
  const admit = () => {
    if (started <= size - refill) open = true
    while (open && waiting.length > 0 && started < size) {
      started++
      waiting.shift()!()
    }
    if (started >= size) open = false
  }
  return {
    take(signal, start, cancelled) {
      if (signal?.aborted) return cancelled(new UploadAbortedError())
      const go = () => {
        signal?.removeEventListener('abort', cancel)
        let given = false
        start(() => {
          if (given) return
          given = true
          started--
          admit()
        })
      }
      const cancel = () => {
        waiting.splice(waiting.indexOf(go), 1)
        cancelled(new UploadAbortedError())
      }
      waiting.push(go)
      signal?.addEventListener('abort', cancel, { once: true })
      admit()
    },
  }
}

/** {@link StartWindow.take} as a promise of the release function. */
export const takeStart = (window: StartWindow, signal?: AbortSignal) =>
  new Promise<() => void>((resolve, reject) => window.take(signal, resolve, reject))
