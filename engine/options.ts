import { MIN_PART_SIZE } from '../protocol/limits.ts'
import type { Gate, UploadState } from './pause/gate.ts'
import type { PartJournal } from './resume/journal.ts'
import type { PauseSignal } from './pause/pause.ts'
import type { Queue } from './http/queue.ts'
import { defaultTransport } from '#default-transport'
import type { Transport } from './http/transport.ts'

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
  /** Why the attempt failed: a `NetworkError`, `S3Error` or `EndpointError` worth retrying. */
  error: unknown
}

/** How bytes are moved, whatever gave the permission to move them. */
export interface TransferOptions {
  /**
   * The length in bytes of a stream body (a `ReadableStream` or async iterable), when known: the
   * endpoint is told it, progress shows it as the total, and the upload fails with a `BodyError`
   * if the stream gives more or fewer bytes. Not used for a Blob or a Uint8Array (their own
   * length counts). @default unknown: known only once the stream ends
   */
  size?: number
  /** Bytes per part; at least 5 MiB, raised automatically to stay within 10 000 parts. Bodies up to one part go as a single PUT. @default 5 MiB */
  partSize?: number
  /** Parts of this upload in flight at once (to share one budget among uploads, pass a `queue`). @default 4 */
  partConcurrency?: number
  /** @deprecated Renamed `partConcurrency`: it always meant parts in flight for one upload. @default 4 */
  queueSize?: number
  /** Keep uploaded parts on storage when the upload fails or is aborted (no AbortMultipartUpload). @default false */
  leavePartsOnError?: boolean
  /**
   * Tries per request, the first included. Network errors, stalls, 5xx, 429, 408, S3's
   * `RequestTimeout` and `BadDigest` (a body damaged on the way) are retried; other 4xx never.
   * With the default backoff, 8 tries wait at least 17.75 s in all before giving up: a Wi-Fi
   * blip of several seconds is ridden out.
   * @default 8
   */
  maxAttempts?: number
  /** @deprecated Renamed `maxAttempts`: it always counted attempts, the first included. @default 8 */
  retries?: number
  /**
   * Backoff base, ms: retry n waits between half and all of `retryDelay × 2^(n-1)`, at most
   * 10 s, or the server's `Retry-After` (up to 20 s).
   * @default 500
   */
  retryDelay?: number
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
   * errors outlast `maxAttempts`, the upload holds as if paused (state `waiting-for-network`)
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
   * How HTTP requests are made, to storage and to the endpoint: `xhrTransport`, `fetchTransport`,
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

/** Where and how to reach the credential endpoint. */
export interface EndpointOptions {
  /** The credential endpoint's URL; absolute URLs allowed. @default '/api/s3-upload' */
  endpoint?: string
  /** Sent to the endpoint only, never to storage (e.g. an Authorization header or CSRF token). @default none */
  endpointHeaders?: Record<string, string>
  /** @deprecated Renamed `endpointHeaders`: they go to the endpoint only, never to storage. @default none */
  headers?: Record<string, string>
}

/** The one home of every default (internal: not exported by any entry, so nobody mutates it). */
export const defaultOptions = {
  partSize: MIN_PART_SIZE,
  partConcurrency: 4,
  leavePartsOnError: false,
  maxAttempts: 8,
  retryDelay: 500,
  stallTimeout: 20_000,
  cleanupTimeout: 60_000,
}

/** Options with every default filled in, plus the state one upload keeps while it runs. */
export type ResolvedOptions = TransferOptions &
  EndpointOptions &
  typeof defaultOptions & {
    transport: Transport
    /** Set once CompleteMultipartUpload is sent: from then on an abort waits for its outcome. */
    completing?: boolean
    /** Background work (cleanup) that `onCleanup` waits for. */
    cleanups: Array<Promise<unknown>>
    /** Pauses (the caller's, and waits for the network); only with a `pauseSignal`. */
    gate?: Gate
    /** Parts already stored, and the record of this upload; only with `resume`. */
    journal?: PartJournal
  }

/**
 * Fills in the defaults (an option set to `undefined` gets its default too), maps deprecated
 * names onto current ones, and checks the counts.
 */
export function resolveOptions(options: TransferOptions & EndpointOptions): ResolvedOptions {
  const given = Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined))
  const resolved = { ...defaultOptions, transport: defaultTransport(), ...given, cleanups: [] } as unknown as ResolvedOptions
  resolved.partConcurrency = options.partConcurrency ?? options.queueSize ?? resolved.partConcurrency
  resolved.maxAttempts = options.maxAttempts ?? options.retries ?? resolved.maxAttempts
  resolved.endpointHeaders = options.endpointHeaders ?? options.headers
  for (const name of ['partConcurrency', 'maxAttempts'] as const) {
    const value = resolved[name]
    if (!Number.isInteger(value) || value < 1) {
      throw new RangeError(`updraft: ${name} must be a whole number of at least 1, got ${value}`)
    }
  }
  resolved.gate = resolved.pauseSignal?.gate(resolved)
  return resolved
}
