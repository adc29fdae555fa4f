import type { UploadError } from './errors.ts'
import type { PartJournal } from './resume/journal.ts'

/**
 * How an opt-in takes part in one upload: the hooks it puts on the run, which the engine calls at
 * fixed points and skips when absent. Their code lives in the opt-in's module, so a page that
 * does not use the opt-in ships none of it: `pauseSignal` installs `hold`, `lost` and `end`
 * (engine/pause/pause.ts), `resume` installs `journal` (engine/resume/resume.ts).
 */
export interface RunHooks {
  /**
   * Runs one body request (a single PUT, a part) until it ends other than by a pause: `send` gets
   * the signal that aborts, with the pause as its reason, when the upload is held; after each
   * hold it waits for the upload to run again and starts `send` afresh (with a fresh retry
   * budget). `onHeld` hears each hold (the bytes in flight stop counting).
   */
  hold?<T>(send: (held: AbortSignal) => Promise<T>, signal: AbortSignal | undefined, onHeld: () => void): Promise<T>
  /**
   * A request's network errors outlasted its retries: resolves once it may try again with a fresh
   * budget (the network is back), or rejects (with `error`, or a body request's `held` reason).
   */
  lost?(error: UploadError, signal: AbortSignal | undefined, held: AbortSignal | undefined): Promise<void>
  /** The upload has settled (its cleanup may run on): nothing waits any more. */
  end?(): void
  /** Parts already stored, and the record of this upload. */
  journal?: PartJournal
}
