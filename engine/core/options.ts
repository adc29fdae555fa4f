import { MIN_PART_SIZE } from '../../protocol/limits.ts'
import { checkPartSize } from '../../protocol/part-size.ts'
import type { UploadAbortedError, UploadError } from './errors.ts'
import type { Transport } from './http.ts'
import type { PauseSignal } from './pause.ts'
import type { UploadState } from './upload-state.ts'

/** A counting semaphore: at most `concurrency` tasks run at once; others wait their turn in order. */
export interface Queue {
  /**
   * Runs `task` once a slot is free, and frees the slot when it settles.
   * @throws {@link UploadAbortedError} when `signal` aborts while the task still waits for a slot.
   */
  run<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T>
}

/** What `onProgress` is told as bytes are sent. */
export interface Progress {
  /**
   * Bytes sent so far: never decreases, never exceeds `total`, and equals `total` only once
   * storage has confirmed the whole upload (a part whose reply is an error does not count).
   */
  loaded: number
  /**
   * The body's size in bytes. For a stream of unknown length (no `size` option), the bytes read
   * from it so far: it grows as the stream is read, and is the final size once the stream ends.
   */
  total: number
}

/** What `onRetry` is told before the engine waits to try a request again. */
export interface RetryEvent {
  /** The attempt that failed (1 = the first). */
  attempt: number
  /** Milliseconds until the next attempt. */
  delay: number
  /** Why the attempt failed: a `NetworkError`, `S3Error` or `ApiError` worth retrying. */
  error: unknown
}

/** How bytes are moved, whatever gave the permission to move them. */
export interface TransferOptions {
  /**
   * The length in bytes of a stream body (a `ReadableStream` or async iterable), when known: the
   * upload API is told it, progress shows it as the total, and the upload fails with a `BodyError`
   * if the stream gives more or fewer bytes. Not used for a Blob or a Uint8Array (their own
   * length counts). @default unknown: known only once the stream ends
   */
  size?: number
  /** Bytes per part; at least 5 MiB, raised automatically to stay within 10 000 parts. Bodies up to one part go as a single PUT. @default 5 MiB */
  partSize?: number
  /** Parts of this upload in flight at once (to share one budget among uploads, pass a `queue`). @default 4 */
  partConcurrency?: number
  /** Keep uploaded parts on storage when the upload fails or is aborted (no AbortMultipartUpload). @default false */
  leavePartsOnError?: boolean
  /**
   * When and how often a failed request is tried again (see {@link RetryOptions}): network
   * errors, stalls, 5xx, 429, 408, S3's `RequestTimeout` and `BadDigest` are retried, other 4xx
   * never. @default `{ limit: 7, delay: 500 }`
   */
  retry?: RetryOptions
  /**
   * A request that moves no byte (out or in) for this long is cancelled and retried as a
   * network error. Measured from the last byte of progress, so a slow but moving link is never
   * cut. The fetch transport cannot see upload progress: there it bounds the whole request.
   * @default 20 000
   */
  stallTimeout?: number
  /**
   * How long cleanup after a failed or aborted upload (AbortMultipartUpload and its retries)
   * may run in the background before it gives up. @default 60 000
   */
  cleanupTimeout?: number
  /**
   * Aborts the upload: the promise rejects with `UploadAbortedError` at once, requests in flight
   * are cancelled, and a multipart upload is aborted on storage in the background (unless
   * `leavePartsOnError`). Once storage is committing the object (Complete sent, a single PUT's
   * last byte gone) the outcome decides instead: resolved if storage stored it. @default none
   */
  signal?: AbortSignal
  /**
   * Pauses and resumes the upload: `new PauseController().signal`. While paused no part starts,
   * the parts in flight are cancelled (sent again on resume, progress holding its mark), no
   * retry or stall timer runs, and the promise stays pending (an abort still ends it at once).
   */
  pauseSignal?: PauseSignal
  /**
   * Wait for the network instead of failing: when the browser goes `offline`, or when network
   * errors outlast the retries (`retry.limit`), the upload holds as if paused (state `waiting-for-network`)
   * and carries on by itself when the browser is back `online` (where no such event comes, it
   * tries again every 10 s). The promise then stays pending until the upload ends or is aborted.
   * Needs a `pauseSignal`: waiting for the network is a pause the engine makes itself.
   * @default false (the React hooks turn it on)
   */
  waitForNetwork?: boolean
  /** The upload paused, waits for the network, or runs again. */
  onStateChange?: (state: UploadState) => void
  /** Bytes sent so far, as they go (see {@link Progress}). @default none */
  onProgress?: (progress: Progress) => void
  /** A request failed in a way worth retrying; the engine waits `delay` ms and tries again. @default none */
  onRetry?: (event: RetryEvent) => void
  /**
   * Called once after a failed or aborted upload, when its background cleanup is over: with no
   * argument when nothing was left to clean up (or `leavePartsOnError` kept it), else with the
   * error that stopped the cleanup (storage may still hold the upload's parts). @default none
   */
  onCleanup?: (error?: unknown) => void
  /**
   * How HTTP requests are made, to storage and to the upload API: `xhrTransport`, `fetchTransport`,
   * `nodeTransport` (`updraft-s3/node-transport`) or your own.
   * @default XMLHttpRequest in browsers (byte progress), node:http in Node, fetch elsewhere
   */
  transport?: Transport
  /**
   * A queue shared by several uploads, so a page with many files keeps one connection budget:
   * every body request (a single PUT, each part) takes a slot of it (see `createQueue`).
   * @default none: only `partConcurrency` bounds this upload
   */
  queue?: Queue
}

/**
 * The retry policy of every request (to storage and to the API), as ky and tus-js-client shape
 * theirs: a limit, the backoff, and a predicate that can overrule the built-in rule.
 */
export interface RetryOptions {
  /**
   * Retries per request after its first attempt. With the default backoff, 7 retries wait at least
   * 17.75 s in all before giving up: a Wi-Fi blip of several seconds is ridden out.
   * @default 7
   */
  limit?: number
  /**
   * Backoff base, ms: retry n waits between half and all of `delay × 2^(n-1)`, at most 10 s, or
   * the server's `Retry-After` (up to 20 s).
   * @default 500
   */
  delay?: number
  /**
   * Decides whether a failed attempt is tried again, within `limit`: `true` retries, `false` gives
   * up, `undefined` leaves it to the built-in rule (the one described at `retry`). Called with the
   * attempt that failed (1 = the first); never for an abort or a pause.
   * @default none: the built-in rule
   */
  shouldRetry?: (error: UploadError, attempt: number) => boolean | undefined
}

/** Where and how to reach your upload API, the route that grants each upload (`createUploadHandler` on the server). */
export interface ApiOptions {
  /** The URL of your upload API; absolute URLs allowed. Never a storage URL. @default '/api/s3-upload' */
  api?: string
  /** Sent to your API only, never to storage (e.g. an Authorization header or CSRF token). @default none */
  apiHeaders?: Record<string, string>
}

/** The one home of every default (internal: not exported by any entry, so nobody mutates it). */
export const defaultOptions = {
  partSize: MIN_PART_SIZE,
  partConcurrency: 4,
  stallTimeout: 20_000,
  cleanupTimeout: 60_000,
}

/** The retry policy's defaults (see {@link RetryOptions}). */
export const defaultRetry = { limit: 7, delay: 500 }

/** Options with every default filled in, frozen: what changes while an upload runs lives in its `UploadRun`. */
export type ResolvedOptions<O = TransferOptions & ApiOptions> = Readonly<
  O &
    typeof defaultOptions & {
      retry: Readonly<typeof defaultRetry & RetryOptions>
    }
>

/** What is set of `options`: an option given as `undefined` (a spread of unset ones) gets its default. */
const defined = (options: object | undefined) =>
  Object.fromEntries(Object.entries(options ?? {}).filter(([, value]) => value !== undefined))

/**
 * Fills in the defaults (an option set to `undefined` gets its default too), checks the counts,
 * and freezes the result.
 */
export function resolveOptions<O extends TransferOptions & ApiOptions>(options: O): ResolvedOptions<O> {
  const retry = { ...defaultRetry, ...defined(options.retry) }
  const resolved = { ...defaultOptions, ...defined(options), retry } as ResolvedOptions<O>
  for (const [name, value, least] of [
    ['partConcurrency', resolved.partConcurrency, 1],
    ['retry.limit', retry.limit, 0],
  ] as const) {
    if (!Number.isInteger(value) || value < least) {
      throw new RangeError(`updraft: ${name} must be a whole number of at least ${least}, got ${value}`)
    }
  }
  // Here, not only where parts are planned: a body of one part is never planned, and the option is wrong all the same.
  checkPartSize(resolved.partSize)
  return Object.freeze(resolved)
}
