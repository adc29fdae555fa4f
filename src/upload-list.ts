import type { UploadResult, UploadState } from '../engine/index.ts'

/** Where an upload in `files` stands; see {@link UploadEntry.status}. */
export type UploadStatus =
  | 'preparing'
  | 'queued'
  | 'uploading'
  | 'retrying'
  | 'paused'
  | 'waiting-for-network'
  | 'done'
  | 'error'
  | 'aborted'

/** One upload in the hook's `files` list (next-s3-upload's tracked file, plus status and outcome). */
export interface UploadEntry<ServerData = unknown> {
  /** Unique within the page: what `retry(id)` and `remove(id)` take, and a React `key`. */
  id: string
  /** The file as picked or dropped. */
  file: File
  /** Percent sent, 0..100; starts at 0. */
  progress: number
  /** Bytes sent so far. */
  uploaded: number
  /** The bytes to send: the file's size, or the prepared file's once the hook's `prepare` gave one. */
  size: number
  /**
   * `preparing` while the hook's `prepare` makes the file to send (a photo made smaller takes a
   * second or two, and each waits its turn), then `queued` until its first bytes move (or it waits
   * for a connection), then `uploading`, then one
   * of the ends. `retrying` while a request waits to be tried again (a network blip, a 5xx): the
   * bar holds still then; the next bytes past it make it `uploading` again. `paused` after
   * `pause()`; `waiting-for-network` while the browser is offline, or after network errors
   * outlasted the retries: it carries on by itself once the network is back.
   */
  status: UploadStatus
  /**
   * Why it failed; for `aborted`, the engine's `AbortError` ("Upload aborted"). While `retrying`,
   * what is being retried; while `waiting-for-network` after the retries, the last network error
   * (its `to` and `origin` say what the page could not reach).
   */
  error?: Error
  /** Set once `status` is `done`. */
  result?: UploadResult<ServerData>
  /**
   * What the server's `onUploadComplete` answered for this file, once `done` (`result.serverData`).
   * A completion the server refused (the bytes are not the declared type, a size lie) makes the
   * entry `error`, with the server's reason as `error.message`.
   */
  serverData?: ServerData
  /** Cancels this upload (in the queue or in flight); a no-op once it has ended. */
  abort(): void
  /**
   * Holds this upload: no part starts, parts in flight are cancelled (sent again on resume), and
   * nothing is removed from storage. A single PUT is sent again whole on resume.
   */
  pause(): void
  /** Carries a paused upload on from the parts already stored. */
  resume(): void
}

/** An entry's pause and resume. */
export type PauseControls = Pick<UploadEntry, 'pause' | 'resume'>

export type UploadAction =
  /** A new entry, at the end, or in the place of entry `replaces` (a retry keeps its row where it was). */
  | { type: 'added'; entry: UploadEntry; replaces?: string }
  /** `prepare` gave the file to send: `size` is what will be sent, and it is `queued`. */
  | { type: 'prepared'; id: string; size: number }
  | { type: 'progressed'; id: string; uploaded: number }
  | { type: 'retrying'; id: string; error: Error }
  /** The engine's `onStateChange`: paused, waiting for the network, or running again. */
  | { type: 'held'; id: string; state: UploadState }
  | { type: 'finished'; id: string; result: UploadResult }
  | { type: 'failed'; id: string; error: Error; aborted: boolean }
  | { type: 'reset' }
  /** Takes one entry off the list, whatever its status (the hook aborts a running one first). */
  | { type: 'removed'; id: string }
  /** Takes every ended entry (done, failed, aborted) off the list; running ones stay. */
  | { type: 'clearedEnded' }

const RUNNING: ReadonlySet<UploadStatus> = new Set([
  'preparing',
  'queued',
  'uploading',
  'retrying',
  'paused',
  'waiting-for-network',
])
const running = (entry: UploadEntry) => RUNNING.has(entry.status)
/** Paused, or waiting for the network: progress and retry events do not change that. */
const held = (entry: UploadEntry) => entry.status === 'paused' || entry.status === 'waiting-for-network'

/**
 * Pure transitions of the file list. Actions for an id that is no longer listed (after a reset)
 * or for an upload that has already ended are ignored, so late engine events cannot resurrect
 * or rewrite an entry.
 */
export function uploadListReducer(files: UploadEntry[], action: UploadAction): UploadEntry[] {
  switch (action.type) {
    case 'added': {
      const at = action.replaces === undefined ? -1 : files.findIndex((entry) => entry.id === action.replaces)
      if (at < 0) return [...files, action.entry]
      const next = files.slice()
      next[at] = action.entry
      return next
    }
    case 'reset':
      return files.length === 0 ? files : []
    case 'removed':
      return files.some((entry) => entry.id === action.id) ? files.filter((entry) => entry.id !== action.id) : files
    case 'clearedEnded':
      return files.every(running) ? files : files.filter(running)
    case 'prepared':
      return update(files, action.id, (entry) => ({
        ...entry,
        size: action.size,
        status: entry.status === 'preparing' ? 'queued' : entry.status,
      }))
    case 'progressed':
      return update(files, action.id, (entry) => {
        const uploaded = Math.min(action.uploaded, entry.size)
        // A retry resends bytes already counted: only bytes past the old mark mean it moves again.
        if ((entry.status === 'retrying' || held(entry)) && uploaded <= entry.uploaded) return entry
        const status = held(entry) ? entry.status : 'uploading'
        return { ...entry, status, uploaded, progress: percent(uploaded, entry.size), error: undefined }
      })
    case 'retrying':
      return update(files, action.id, (entry) =>
        held(entry) ? entry : { ...entry, status: 'retrying', error: action.error },
      )
    case 'held':
      return update(files, action.id, (entry) => ({
        ...entry,
        status: action.state === 'running' ? (entry.uploaded > 0 ? 'uploading' : 'queued') : action.state,
        // What it waits to reach stays said (a refused host is not the browser being offline).
        error: action.state === 'waiting-for-network' ? entry.error : undefined,
      }))
    case 'finished':
      // Success means every byte went: the bar ends at 100% even if the last progress event was lost.
      return update(files, action.id, (entry) => ({
        ...entry,
        status: 'done',
        uploaded: entry.size,
        progress: 100,
        result: action.result,
        serverData: action.result.serverData,
      }))
    case 'failed':
      return update(files, action.id, (entry) => ({
        ...entry,
        status: action.aborted ? 'aborted' : 'error',
        error: action.error,
      }))
  }
}

const NO_PAUSE: PauseControls = { pause() {}, resume() {} }

/** A new entry: at 0%, waiting for its turn, or first for the hook's `prepare`. */
export function queuedEntry(
  id: string,
  file: File,
  abort: () => void,
  controls: PauseControls = NO_PAUSE,
  status: 'queued' | 'preparing' = 'queued',
): UploadEntry {
  return { id, file, progress: 0, uploaded: 0, size: file.size, status, abort, ...controls }
}

/**
 * A file the page refused before asking the upload API (over the size limit, a type not allowed):
 * listed with its reason, ended from the start, never sent.
 */
export function refusedEntry(id: string, file: File, error: Error): UploadEntry {
  return { id, file, progress: 0, uploaded: 0, size: file.size, status: 'error', error, abort: () => {}, ...NO_PAUSE }
}

/** Still preparing, queued, uploading, retrying, paused or waiting for the network: not ended. */
export const isRunning = running

function update(files: UploadEntry[], id: string, change: (entry: UploadEntry) => UploadEntry): UploadEntry[] {
  const index = files.findIndex((entry) => entry.id === id)
  const entry = files[index]
  if (!entry || !running(entry)) return files
  const next = files.slice()
  next[index] = change(entry)
  return next
}

/** An empty file has nothing to send: 0% until it is done. */
const percent = (uploaded: number, size: number) => (size > 0 ? (uploaded / size) * 100 : 0)
