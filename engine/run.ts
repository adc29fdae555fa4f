import type { UploadResult } from '../protocol/wire.ts'
import { callBack } from './callback.ts'
import { UploadAbortedError, type UploadError } from './errors.ts'
import { type ApiOptions, resolveOptions, type ResolvedOptions, type TransferOptions } from './options.ts'
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

/**
 * One upload while it runs: its options, resolved once and frozen, and everything that changes
 * as it goes (tus-js-client's `Upload` instance, in a plain object). Made by {@link runUpload}.
 */
export interface UploadRun<O = TransferOptions & ApiOptions> {
  readonly options: ResolvedOptions<O>
  /**
   * Storage may be committing the object: CompleteMultipartUpload is sent, or a single PUT's last
   * byte has left. From then on an abort waits for the outcome, which is the truth.
   */
  completing?: boolean
  /** Background work (cleanup) that `onCleanup` waits for. */
  readonly cleanups: Array<Promise<unknown>>
  /** What the opt-ins given to this upload add to it. */
  readonly hooks: RunHooks
}

/**
 * Runs one upload so that its promise settles within a bound whatever storage does. `abort()`
 * rejects it at once with `AbortError` — unless the upload is committing (Complete sent, or a
 * single PUT's last byte gone), when the outcome decides: resolved if storage completed it. The
 * work goes on in the background only to clean up (and is itself bounded by stall timeouts and
 * the cleanup deadline); once everything it started is over, `onCleanup` hears how that ended.
 */
export async function runUpload<O extends TransferOptions & ApiOptions>(
  given: O,
  upload: (run: UploadRun<O>) => Promise<UploadResult>,
): Promise<UploadResult> {
  const run = createRun(given)
  const { options } = run
  const { signal } = options
  const work = upload(run)
  const over = () => {
    run.hooks.end?.()
    Promise.all(run.cleanups).then((errors) => callBack(options.onCleanup, errors.find((error) => error !== undefined)))
  }
  work.then(over, over)
  return new Promise<UploadResult>((resolve, reject) => {
    const onAbort = () => run.completing || reject(new UploadAbortedError())
    signal?.addEventListener('abort', onAbort)
    if (signal?.aborted) onAbort()
    work
      .then(resolve, (error) => reject(signal?.aborted ? new UploadAbortedError() : error))
      .finally(() => signal?.removeEventListener('abort', onAbort))
  })
}

/**
 * A run from the caller's options: an upload's (see {@link runUpload}), or one for requests of
 * their own (CreateSession, discarding a recorded upload, tagging an object).
 */
export function createRun<O extends TransferOptions & ApiOptions>(given: O): UploadRun<O> {
  const options = resolveOptions(given)
  return { options, cleanups: [], hooks: { ...options.pauseSignal?.hooks(options) } }
}

/**
 * Runs cleanup after the upload's own promise has moved on; `onCleanup` learns how it ended.
 * NoSuchUpload counts as done: what cleanup was to remove is gone.
 */
export function inBackground(run: UploadRun, task: () => Promise<unknown>): void {
  run.cleanups.push(
    Promise.resolve().then(task).then(
      () => undefined,
      (error) => ((error as { code?: string }).code === 'NoSuchUpload' ? undefined : error),
    ),
  )
}

/**
 * A body request's hold (see {@link RunHooks.hold}) stops it, unless the upload is committing (a
 * single PUT whose last byte has left: storage may be writing the object).
 */
export const isHeld = (run: UploadRun, held: AbortSignal | undefined) => held?.aborted && !run.completing
