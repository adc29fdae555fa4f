import type { Strategy, UploadResult } from '../../protocol/wire.ts'
import { callBack, onAbort } from './callback.ts'
import { UploadAbortedError } from './errors.ts'
import { type ApiOptions, type ResolvedOptions, resolveOptions, type TransferOptions } from './options.ts'
import { type ProgressTracker, trackProgress } from './progress.ts'
import type { RunHooks } from './run-hooks.ts'
import type { Sign } from './signing.ts'

/**
 * One upload while it runs: its options, resolved once and frozen (the caller's `signal` and
 * `pauseSignal` among them), and everything that changes as it goes (tus-js-client's `Upload`
 * instance, in a plain object). Made by {@link runUpload}; each step of the upload reads it and
 * records here what it started, so a part's path runs down the layers with the run in hand.
 */
export interface UploadRun<O = TransferOptions & ApiOptions> {
  readonly options: ResolvedOptions<O>
  /**
   * How the upload API is asked for permission: the `strategy` option when named, else token mode
   * (the protocol's default) unless this page learned that the API has none (engine/modes/request.ts).
   */
  strategy?: Strategy
  /** Where the upload is; see {@link Phase}. The commit rule ({@link abortCancels}, {@link isHeld}) reads it. */
  phase: Phase
  /** Background work (cleanup) that `onCleanup` waits for. */
  readonly cleanups: Array<Promise<unknown>>
  /**
   * Transport requests not yet closed, each settling when it has: a body wholly sent when the
   * upload failed is left to get its reply (http/send.ts), and cleanup waits for it.
   */
  readonly open: Set<Promise<unknown>>
  /** What the opt-ins given to this upload add to it. */
  readonly hooks: RunHooks
  /** Bytes sent so far, as `onProgress` hears them: made when they start to move ({@link startTransfer}). */
  progress?: ProgressTracker
  /**
   * Signs this upload's storage requests with credentials this side holds, renewing them as
   * storage asks (token mode, `uploadObject`). None in presigned mode: the upload API signs.
   */
  sign?: Sign
  /** The multipart upload being sent, once storage (or the upload API) has created it. */
  parts?: PartList
  /**
   * Storage's reply that stored the object carried no ETag (RGW's to CompleteMultipartUpload):
   * the checksum opt-in's check of the object's ETag waits for one learned otherwise, from
   * `/complete` (modes/confirm.ts) or a HEAD (`uploadObject`).
   */
  checkETag?: (etag: string) => Promise<void>
}

/** A multipart upload as the part loop fills it. */
export interface PartList {
  readonly uploadId: string
  /** Every part but the last is this long. */
  readonly partSize: number
  /** Part n's ETag at index n − 1, once storage has accepted it (or holds it, when resumed). */
  readonly etags: string[]
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
    run.phase = 'settled'
    run.hooks.end?.()
    Promise.all(run.cleanups).then((errors) =>
      callBack(
        options.onCleanup,
        errors.find((error) => error !== undefined),
      ),
    )
  }
  work.then(over, over)
  return new Promise<UploadResult>((resolve, reject) => {
    const stop = onAbort(signal, () => abortCancels(run, signal) && reject(new UploadAbortedError()))
    work.then(resolve, (error) => reject(signal?.aborted ? new UploadAbortedError() : error)).finally(stop)
  })
}

/**
 * A run from the caller's options: an upload's (see {@link runUpload}), or one for requests of
 * their own (CreateSession, discarding a recorded upload, tagging an object).
 */
export function createRun<O extends TransferOptions & ApiOptions>(given: O): UploadRun<O> {
  const options = resolveOptions(given)
  return {
    options,
    phase: 'requesting',
    cleanups: [],
    open: new Set(),
    hooks: { ...options.pauseSignal?.hooks(options) },
  }
}

/**
 * Runs cleanup after the upload's own promise has moved on; `onCleanup` learns how it ended.
 * NoSuchUpload counts as done: what cleanup was to remove is gone.
 */
export function inBackground(run: UploadRun, task: () => Promise<unknown>): void {
  run.cleanups.push(
    Promise.resolve()
      .then(task)
      .then(
        () => undefined,
        (error) => ((error as { code?: string }).code === 'NoSuchUpload' ? undefined : error),
      ),
  )
}

/**
 * The bytes start to move (a single PUT, or the first part once the multipart upload exists):
 * from here an abort has storage requests to cancel, and progress counts against `total` (asked
 * at each report: a stream of unknown length grows).
 */
export function startTransfer(run: UploadRun, total: () => number): ProgressTracker {
  run.phase = 'transferring'
  return (run.progress = trackProgress(total, run.options.onProgress))
}

/**
 * Where an upload is: asking the upload API for permission; moving bytes; storage committing the
 * object (CompleteMultipartUpload sent, or a single PUT's last byte gone); the API verifying it
 * (`/complete`); over, with only cleanup left in the background.
 */
export type Phase = 'requesting' | 'transferring' | 'committing' | 'confirming' | 'settled'

// The commit rule, in one place: what may an abort or a pause still cancel? Everything, but
// while storage commits the object: neither can undo that work, so the outcome decides what the
// upload reports (resolved if storage stored it), and no request of it is cancelled.

/** Whether `signal`'s abort cancels: always for another signal (a sibling part's failure, a cleanup deadline); the caller's, unless committing. */
export const abortCancels = (run: UploadRun, signal: AbortSignal | undefined) =>
  run.phase !== 'committing' || signal !== run.options.signal

/** Whether a body request's hold (see {@link RunHooks.hold}) stops it now: held, and not committing. */
export const isHeld = (run: UploadRun, held: AbortSignal | undefined) => !!held?.aborted && run.phase !== 'committing'
