import { NetworkError } from '../../engine/index.ts'
import { FileRefusedError } from '../file-checks.ts'
import { isFinal } from '../messages.ts'
import { isRunning, type UploadEntry } from '../upload-list.ts'

/** What a row says it is doing: the hook's status, refined by what the person can tell apart. */
export type RowState = 'queued' | 'uploading' | 'finishing' | 'retrying' | 'paused' | 'offline' | 'done' | 'failed' | 'refused' | 'cancelled'

export const ROW_LABELS: Record<RowState, string> = {
  queued: 'Waiting',
  uploading: 'Uploading',
  finishing: 'Finishing…',
  retrying: 'Retrying',
  paused: 'Paused',
  offline: 'Waiting for the network',
  done: 'Done',
  failed: 'Failed',
  refused: 'Not uploaded',
  cancelled: 'Cancelled',
}

/**
 * - `finishing`: every byte is sent but storage has not confirmed yet (a multipart upload's
 *   CompleteMultipartUpload, or the last reply): "100% · Uploading" would be a lie.
 * - `paused`: the person paused it (Pause); nothing moves until Resume.
 * - `offline`: the browser is offline, or network errors outlasted the retries: the upload waits
 *   and carries on by itself once the network is back ("waiting for the network", never
 *   "Failed to fetch"). Online, with the request's target known, it is `retrying` instead: the
 *   upload API or storage is out of reach ("Can't reach storage at …"), not the network.
 * - `refused`: the page refused the file by the endpoint's limits, or the upload ended in a way no
 *   retry can change (a refused type, a server misconfigured: src/messages.ts `isFinal`).
 * - `cancelled`: aborted on purpose, told apart from a failure.
 */
export function rowState(entry: UploadEntry, online: boolean): RowState {
  if (entry.status === 'paused') return 'paused'
  if (!online && isRunning(entry)) return 'offline'
  // Online, a host that gives no reply is out of reach, not the network: the engine keeps trying it.
  if (entry.status === 'waiting-for-network') return entry.error instanceof NetworkError && entry.error.to ? 'retrying' : 'offline'
  switch (entry.status) {
    case 'queued':
      return 'queued'
    case 'retrying':
      return 'retrying'
    case 'uploading':
      // The engine holds progress one byte short of the total until storage confirms the upload
      // (engine/core/progress.ts), so "every byte sent" is size - 1 here.
      return entry.uploaded > 0 && entry.uploaded >= entry.size - 1 ? 'finishing' : 'uploading'
    case 'done':
      return 'done'
    case 'aborted':
      return 'cancelled'
    case 'error':
      // Nothing a retry could change (a refused type or size, a misconfigured server): no Retry.
      return entry.error instanceof FileRefusedError || isFinal(entry.error) ? 'refused' : 'failed'
  }
  return 'uploading'
}

export interface Overall {
  /** Files sent or being sent (refused, failed and cancelled ones are out of the count). */
  files: number
  /** Their bytes, and how many have gone. */
  total: number
  sent: number
  running: number
  /** Of the running ones, how many the person paused. */
  paused: number
  done: number
  /** Failed, refused or cancelled. */
  ended: number
}

/** The list as one figure, for the overall bar and the summary line. */
export function overall(entries: UploadEntry[]): Overall {
  const counted = entries.filter((entry) => isRunning(entry) || entry.status === 'done')
  const running = counted.filter(isRunning).length
  const done = counted.length - running
  return {
    files: counted.length,
    total: counted.reduce((sum, entry) => sum + entry.size, 0),
    sent: counted.reduce((sum, entry) => sum + (entry.status === 'done' ? entry.size : entry.uploaded), 0),
    running,
    paused: counted.filter((entry) => entry.status === 'paused').length,
    done,
    ended: entries.length - counted.length,
  }
}
