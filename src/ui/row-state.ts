import { NetworkError } from '../../engine/index.ts'
import { FileRefusedError } from '../file-checks.ts'
import { isFinal } from '../messages.ts'
import { isRunning, type UploadEntry } from '../upload-list.ts'

/** What a row says it is doing: the hook's status, refined by what the person can tell apart. */
export type RowState =
  | 'preparing'
  | 'queued'
  | 'uploading'
  | 'finishing'
  | 'retrying'
  | 'paused'
  | 'offline'
  | 'done'
  | 'failed'
  | 'refused'
  | 'cancelled'

export const ROW_LABELS: Record<RowState, string> = {
  preparing: 'Preparing…',
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
 * - `preparing`: the hook's `prepare` is making the file to send (a photo made smaller).
 * - `finishing`: every byte is sent but storage has not confirmed yet (a multipart upload's
 *   CompleteMultipartUpload, or the last reply): "100% · Uploading" would be a lie.
 * - `paused`: the person paused it (Pause); nothing moves until Resume.
 * - `offline`: the browser is offline, or network errors outlasted the retries: the upload waits
 *   and carries on by itself once the network is back ("waiting for the network", never
 *   "Failed to fetch"). Online, with the request's target known, it is `retrying` instead: the
 *   upload API or storage is out of reach ("Can't reach storage at …"), not the network.
 * - `refused`: the page refused the file by the upload API's limits, or the upload ended in a way no
 *   retry can change (a refused type, a server misconfigured: src/messages.ts `isFinal`).
 * - `cancelled`: aborted on purpose, told apart from a failure.
 */
export function rowState(entry: UploadEntry, online: boolean): RowState {
  if (entry.status === 'paused') return 'paused'
  if (!online && isRunning(entry)) return 'offline'
  // Online, a host that gives no reply is out of reach, not the network: the engine keeps trying it.
  if (entry.status === 'waiting-for-network')
    return entry.error instanceof NetworkError && entry.error.to ? 'retrying' : 'offline'
  switch (entry.status) {
    case 'preparing':
      return 'preparing'
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

/** What a row waits for once every byte is sent, in words ("Finishing…" alone, under a full bar, said nothing for seconds). */
export const FINISHING_WAIT = 'waiting for storage and the server to confirm the file'

export interface Overall {
  /** Every file listed. */
  files: number
  /** Their bytes, and how many are stored or on their way (a failed, refused or cancelled file's count none). */
  total: number
  sent: number
  running: number
  /** Of the running ones, how many the person paused. */
  paused: number
  /** Of the running ones, how many the hook's `prepare` is still making. */
  preparing: number
  done: number
  cancelled: number
  /** Failed or refused. */
  failed: number
}

/**
 * The list as one figure, for the overall bar and the summary line. The bar counts every file
 * listed: what was stored, and what is on its way, of all of it, so a list where 3 of 4 files were
 * refused never reads "100%", nor a cancelled file sit under a full bar.
 */
export function overall(entries: UploadEntry[]): Overall {
  const count = (status: UploadEntry['status']) => entries.filter((entry) => entry.status === status).length
  const running = entries.filter(isRunning).length
  const done = count('done')
  const cancelled = count('aborted')
  return {
    files: entries.length,
    total: entries.reduce((sum, entry) => sum + entry.size, 0),
    sent: entries.reduce(
      (sum, entry) => sum + (entry.status === 'done' ? entry.size : isRunning(entry) ? entry.uploaded : 0),
      0,
    ),
    running,
    paused: count('paused'),
    preparing: count('preparing'),
    done,
    cancelled,
    failed: entries.length - running - done - cancelled,
  }
}
