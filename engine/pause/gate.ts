import { UploadError } from '../errors.ts'

/**
 * What an upload is doing, as `onStateChange` reports it: sending (or about to), held by
 * `PauseController.pause()`, or held until the network is back (`waitForNetwork`).
 */
export type UploadState = 'running' | 'paused' | 'waiting-for-network'

export interface GateOptions {
  waitForNetwork?: boolean
  onStateChange?: (state: UploadState) => void
}

/**
 * How the engine sees one upload's pauses (engine/pause/pause.ts makes it, for uploads given a
 * `pauseSignal`; without one there is none, and nothing ever pauses).
 */
export interface Gate {
  /** Aborts once the upload pauses or loses the network; renewed when it runs again. */
  readonly held: AbortSignal
  /** Network errors outlasted the retries: wait for the network. False when not waiting for it. */
  networkLost(): boolean
  /** Resolves once the upload runs (at once if it does); rejects when `signal` aborts first. */
  wait(signal?: AbortSignal): Promise<void>
  dispose(): void
}

/** Internal: a request stopped because its upload paused. Never reaches the caller. */
export class PausedError extends UploadError {
  override name = 'PausedError'
}

/**
 * Runs `task` (one body request, with its retries) until it ends other than by a pause: after
 * each pause it waits for the upload to run again and starts `task` afresh, with a fresh retry
 * budget. `onPaused` hears each pause (the bytes in flight stop counting).
 */
export async function untilNotPaused<T>(
  gate: Gate | undefined,
  signal: AbortSignal | undefined,
  task: () => Promise<T>,
  onPaused: () => void,
): Promise<T> {
  for (;;) {
    await gate?.wait(signal)
    try {
      return await task()
    } catch (error) {
      if (!(gate && error instanceof PausedError)) throw error
      onPaused()
    }
  }
}
