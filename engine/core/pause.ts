import { callBack } from './callback.ts'
import { NetworkError, UploadAbortedError, type UploadError } from './errors.ts'
import type { RunHooks } from './run-hooks.ts'
import type { GateOptions, UploadState } from './upload-state.ts'

/**
 * The signal half of a `PauseController`, passed to an upload as `pauseSignal`: `paused`, and
 * `pause` / `resume` events. It also carries the machinery that watches it, so pages that never
 * pause ship none of it.
 */
export class PauseSignal extends EventTarget {
  readonly paused: boolean = false

  /**
   * @internal How an upload watches this signal (and the network, with `waitForNetwork`): the
   * run's pause hooks, so pages that never pause ship none of this machinery.
   */
  hooks(options: GateOptions): RunHooks {
    return createGate(this, options)
  }
}

/**
 * Pauses and resumes uploads, as an `AbortController` aborts them: pass `controller.signal` as
 * `pauseSignal` (one controller may hold several uploads). Pause is not abort: the upload's
 * promise stays pending, nothing is removed from storage, and `resume()` carries on from the
 * parts already stored. A pause cancels the parts in flight (their bytes are sent again on
 * resume; progress holds its mark meanwhile); a single PUT is cancelled and sent again whole.
 *
 * @example
 * ```ts
 * const pauses = new PauseController()
 * const done = upload(file, { pauseSignal: pauses.signal })
 * pauses.pause() // … later
 * pauses.resume()
 * await done
 * ```
 */
export class PauseController {
  readonly signal: PauseSignal = new PauseSignal()

  pause(): void {
    this.set(true)
  }

  resume(): void {
    this.set(false)
  }

  private set(paused: boolean) {
    if (this.signal.paused === paused) return
    ;(this.signal as { paused: boolean }).paused = paused
    this.signal.dispatchEvent(new Event(paused ? 'pause' : 'resume'))
  }
}

/** How long a wait for the network lasts when the browser gives no `online` event to end it. */
const NETWORK_PROBE_MS = 10_000

/**
 * The reason a body request stops when its upload is held: never retried (it is no
 * `UploadError`), and never reaching the caller (the `hold` hook catches it and waits).
 */
class PausedError extends Error {
  override name = 'PausedError'
}

/**
 * One upload's pause state, as the run's hooks: held while the caller pauses it or while it waits
 * for the network. `held` aborts (with a {@link PausedError}) when it becomes held, so body
 * requests, which listen to it, stop; it is renewed when the upload runs again.
 */
function createGate(pauseSignal: PauseSignal, { waitForNetwork, onStateChange }: GateOptions): RunHooks {
  let offline = false
  let held = new AbortController()
  let probe: ReturnType<typeof setTimeout> | undefined
  /** Waits in progress: each ends when the upload runs again, or rejects. */
  const waiters = new Set<{ wake(): void; cancel(): void }>()
  let state: UploadState = 'running'
  let disposed = false

  const update = () => {
    const next: UploadState = pauseSignal.paused ? 'paused' : offline ? 'waiting-for-network' : 'running'
    if (next === state) return
    if (state === 'running') held.abort(new PausedError(next))
    state = next
    if (next === 'running') {
      held = new AbortController()
      for (const waiter of waiters) waiter.wake()
    }
    callBack(onStateChange, next)
  }
  const setOffline = (value: boolean) => {
    clearTimeout(probe)
    offline = value
    // No `online` event will come where there is no `navigator.onLine` (Node), or where the
    // browser thinks it is online but storage is out of reach: try again after a while.
    if (value && globalThis.navigator?.onLine !== false) probe = setTimeout(() => setOffline(false), NETWORK_PROBE_MS)
    update()
  }
  const wentOffline = () => setOffline(true)
  const cameOnline = () => setOffline(false)
  const listen = waitForNetwork && typeof addEventListener === 'function'

  pauseSignal.addEventListener('pause', update)
  pauseSignal.addEventListener('resume', update)
  if (listen) {
    addEventListener('offline', wentOffline)
    addEventListener('online', cameOnline)
  }
  if (waitForNetwork && globalThis.navigator?.onLine === false) offline = true
  update()

  /** Resolves once the upload runs (at once if it does); rejects when `signal` aborts first. */
  const wait = (signal?: AbortSignal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted || disposed) return reject(new UploadAbortedError())
      if (state === 'running') return resolve()
      const waiter = {
        wake: () => (done(), resolve()),
        cancel: () => (done(), reject(new UploadAbortedError())),
      }
      const done = () => {
        waiters.delete(waiter)
        signal?.removeEventListener('abort', waiter.cancel)
      }
      waiters.add(waiter)
      signal?.addEventListener('abort', waiter.cancel)
    })

  return {
    async hold(send, signal, onHeld) {
      for (;;) {
        await wait(signal)
        try {
          return await send(held.signal)
        } catch (error) {
          if (!(error instanceof PausedError)) throw error
          onHeld()
        }
      }
    },
    // Network errors outlasted the retries: with `waitForNetwork`, wait for the network (a body
    // request stops as if paused, and starts again with the upload). Once the upload has settled
    // (its cleanup runs on) nothing waits any more.
    lost(error: UploadError, signal, requestHeld) {
      if (!(waitForNetwork && !disposed && error instanceof NetworkError)) throw error
      setOffline(true)
      if (requestHeld) throw requestHeld.reason
      return wait(signal)
    },
    end() {
      disposed = true
      for (const waiter of waiters) waiter.cancel()
      clearTimeout(probe)
      pauseSignal.removeEventListener('pause', update)
      pauseSignal.removeEventListener('resume', update)
      if (listen) {
        removeEventListener('offline', wentOffline)
        removeEventListener('online', cameOnline)
      }
    },
  }
}
