import type { PresignedReply, TokenReply } from '../../protocol/wire.ts'
import type { UploadError } from './errors.ts'

/**
 * What the `post` hook reads of the run it is given (an `UploadRun`, engine/core/run.ts: named by
 * its fields here, as that module imports this one).
 */
export interface HookedRun {
  readonly options: {
    readonly api?: string
    readonly apiHeaders?: Record<string, string>
    readonly signal?: AbortSignal
  }
}

/** One POST to the upload API, no retries (engine/transport/api.ts `postOnce`), for the run the hook was given. */
export type PostOnce = <T>(run: HookedRun, route: string, body: unknown, signal: AbortSignal | undefined) => Promise<T>

/**
 * How an opt-in takes part in one upload: the hooks it puts on the run, which the engine calls at
 * fixed points and skips when absent. Their code lives in the opt-in's module, so a page that
 * does not use the opt-in ships none of it: `pauseSignal` installs `hold`, `lost` and `end`
 * (engine/core/pause.ts), `resume` installs `journal` (engine/resume/resume.ts), `uploadObject`
 * installs `lostCreates`; the React layer's pause signal installs `post` (src/batch-api.ts).
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
  /**
   * CreateMultipartUpload had to be retried (or failed) where the target has no
   * `abortOtherUploads`: aborts the uploads its lost replies may have made on the key, but `keep`
   * (`uploadObject` installs it: engine/s3/lost-creates.ts). `callMs`: how long the call took.
   */
  lostCreates?(keep: string | undefined, callMs: number): Promise<void>
  /**
   * Answers one attempt of a POST to the upload API (`route`: '' the upload request, '/complete',
   * …) in the engine's stead, e.g. as one file of a batch request sent with `postOnce`; undefined
   * leaves it to the engine. A rejection is judged as the engine's own attempt's (retried or not).
   */
  post?(run: HookedRun, route: string, body: unknown, postOnce: PostOnce): Promise<unknown> | undefined
}

/**
 * The part loop's view of resume (engine/resume/resume.ts makes it; without the `resume` option there is
 * none): parts storage already holds are not sent again, and every step is recorded so another
 * page can carry the upload on.
 */
export interface PartJournal {
  /** The multipart upload to carry on (token mode skips CreateMultipartUpload). */
  uploadId?: string
  /** Its part size, as recorded (token mode plans its own parts: the same plan as the record's). */
  partSize?: number
  /** It was started from a stream of unknown length: its presigned ticket has no plan (each part URL is asked with its length). */
  sizeUnknown?: boolean
  /** Part number → ETag of the parts storage holds: not sent again. */
  stored: Map<number, string>
  /** The multipart upload exists on storage; `partCount` undefined for a stream of unknown length. */
  started(uploadId: string, partSize: number, partCount: number | undefined): void
  /** Storage accepted a part. */
  accepted(partNumber: number, etag: string): void
}

/** What `upload()` sends with: the upload API's reply (or one rebuilt from a resume record). */
export interface Prepared {
  reply: TokenReply | PresignedReply
  contentType: string
}
