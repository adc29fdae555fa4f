import { MIN_PART_SIZE } from '../protocol/limits.ts'
import type { Queue } from './queue.ts'
import { defaultTransport } from '#default-transport'
import type { Transport } from './transport.ts'

export interface Progress {
  /** Bytes sent so far: never decreases, never exceeds `total`, ends equal to it. */
  loaded: number
  total: number
}

/** How bytes are moved, whatever gave the permission to move them. */
export interface TransferOptions {
  /** Bytes per part; at least 5 MiB, raised automatically to stay within 10 000 parts. Bodies up to one part go as a single PUT. @default 5 MiB */
  partSize?: number
  /** Parts in flight at once for this upload. @default 4 */
  queueSize?: number
  /** Keep uploaded parts on storage when the upload fails or is aborted (no AbortMultipartUpload). @default false */
  leavePartsOnError?: boolean
  /** Attempts per request, the first included; only network errors, 5xx and 429 are retried. @default 3 */
  retries?: number
  signal?: AbortSignal
  onProgress?: (progress: Progress) => void
  /** @default XMLHttpRequest in browsers (byte progress), fetch elsewhere */
  transport?: Transport
  /**
   * A queue shared by several uploads, so a page with many files keeps one connection budget:
   * every body request (a single PUT, each part) takes a slot of it.
   */
  queue?: Queue
}

export const defaultOptions = {
  partSize: MIN_PART_SIZE,
  queueSize: 4,
  leavePartsOnError: false,
  retries: 3,
}

export type ResolvedOptions = TransferOptions & typeof defaultOptions & { transport: Transport }

/** Fills in the defaults (an option set to `undefined` gets its default too) and checks the counts. */
export function resolveOptions(options: TransferOptions): ResolvedOptions {
  const resolved = {
    ...options,
    partSize: options.partSize ?? defaultOptions.partSize,
    queueSize: options.queueSize ?? defaultOptions.queueSize,
    leavePartsOnError: options.leavePartsOnError ?? defaultOptions.leavePartsOnError,
    retries: options.retries ?? defaultOptions.retries,
    transport: options.transport ?? defaultTransport(),
  }
  for (const name of ['queueSize', 'retries'] as const) {
    const value = resolved[name]
    if (!Number.isInteger(value) || value < 1) {
      throw new RangeError(`updraft: ${name} must be a whole number of at least 1, got ${value}`)
    }
  }
  return resolved
}
