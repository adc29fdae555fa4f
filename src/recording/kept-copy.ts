import type { TransferOptions } from '../../engine/core/options.ts'
import type { UploadResult } from '../../engine/index.ts'
import type { UploadOptions } from '../../engine/modes/request.ts'
import { type ResumeUploads, resumeUploads } from '../../engine/resume/resume.ts'
import { indexedDbResumeStore, memoryResumeStore } from '../../engine/resume/resume-store.ts'
import { upload } from '../../engine/upload.ts'

// A recording's copy in the browser's origin-private file system (OPFS), so a page closed
// mid-recording loses as little as possible: every chunk is written here before it is handed to
// the upload, and the next visit finishes the upload from the copy through the engine's resume
// (parts already on storage are not sent again). A chunk of its own (useRecordingUpload imports
// it when a recording starts or the hook mounts): pages that never record ship none of it.
//
// Layout: updraft-recordings/{id}/about.json ({ name, type, startedAt }) and one file per chunk,
// named 1, 2, 3…: a file is whole once written (createWritable commits on close), so a tab closed
// mid-write loses that chunk only, never leaves a hole (writes run one after another).

const DIRECTORY = 'updraft-recordings'
const ABOUT = 'about.json'
/** A recording's Web Lock: held while a tab records or finishes it, so another tab never takes it for interrupted. */
const lockOf = (id: string) => `updraft-recording:${id}`

/** A recording kept in this browser, and what its copy holds now. */
export interface KeptRecording {
  /** The copy's folder: also the name of its upload's resume record. */
  id: string
  /** The file name it is stored under. */
  name: string
  /** Its type without codecs (`video/webm`). */
  type: string
  /** Bytes kept. */
  size: number
  /** When recording began, ms since the epoch. */
  startedAt: number
}

/** A recording being copied as it is recorded. */
export interface LocalCopy {
  id: string
  /** `upload()`'s options that record its upload under the copy's id, for the next visit to carry it on. */
  journal: Pick<UploadOptions, 'resume' | 'fingerprint'>
  /** Writes the next chunk; never rejects (a failed write, e.g. the quota reached, ends the copy there). */
  keep(chunk: Blob): Promise<void>
  /** Lets other tabs (and this one's list) see the copy: the recording ended without being stored. */
  release(): void
  /** Deletes the copy (what is left of it is no longer offered once this resolves). */
  discard(): Promise<void>
}

/** The resume records of recordings' uploads: apart from files' (`updraft-resume`), which a page resumes when the file is picked again. */
let resume: ResumeUploads | undefined
const recordingResume = () =>
  (resume ??= resumeUploads({
    store: typeof indexedDB === 'undefined' ? memoryResumeStore() : indexedDbResumeStore('updraft-recordings'),
  }))
const journalOf = (id: string) => ({ resume: recordingResume(), fingerprint: id })

const folder = async (create: boolean) =>
  (await navigator.storage.getDirectory()).getDirectoryHandle(DIRECTORY, { create })

async function write(dir: FileSystemDirectoryHandle, name: string, data: Blob | string) {
  const writable = await (await dir.getFileHandle(name, { create: true })).createWritable()
  await writable.write(data)
  await writable.close()
}

const remove = async (id: string) => (await folder(false)).removeEntry(id, { recursive: true }).catch(() => {})

/**
 * Deletes a copy whose recording is stored: its `about.json` at once (one file: without it no tab
 * offers the copy again), the chunks after, in the background (a folder of many chunk files takes
 * Firefox ~0.3 s, which the stored recording's callback need not wait for).
 */
async function forget(id: string) {
  await (await folder(false))
    .getDirectoryHandle(id)
    .then((dir) => dir.removeEntry(ABOUT))
    .catch(() => {})
  void remove(id)
}

/**
 * Takes the recording's Web Lock when no tab holds it: the release, or undefined when another tab
 * holds it. Without Web Locks, always taken (a nothing to release).
 */
function hold(id: string): Promise<(() => void) | undefined> {
  const locks = globalThis.navigator?.locks
  if (!locks) return Promise.resolve(() => {})
  return new Promise((resolve) => {
    void locks.request(lockOf(id), { ifAvailable: true }, (lock) => {
      if (!lock) return resolve(undefined)
      return new Promise<void>((release) => resolve(() => release()))
    })
  })
}

/**
 * Starts a copy of a recording: its folder and `about.json`. Undefined where the browser cannot
 * keep one (no OPFS or no `createWritable`: older browsers, some private windows), or it
 * refused (quota): the recording then goes on as without a copy.
 */
export async function startCopy(name: string, type: string): Promise<LocalCopy | undefined> {
  const startedAt = Date.now()
  const id = `${startedAt}-${Math.random().toString(36).slice(2, 10)}`
  let release: (() => void) | undefined
  try {
    release = await hold(id)
    const dir = await (await folder(true)).getDirectoryHandle(id, { create: true })
    await write(dir, ABOUT, JSON.stringify({ name, type, startedAt }))
    let count = 0
    let broken = false
    return {
      id,
      journal: journalOf(id),
      async keep(chunk) {
        if (broken) return
        try {
          await write(dir, String(++count), chunk)
        } catch {
          broken = true
        }
      },
      release: () => release?.(),
      async discard() {
        await forget(id)
        release?.()
      },
    }
  } catch {
    release?.()
    await remove(id).catch(() => {})
    return undefined
  }
}

/** The chunks a copy holds, in order: the first ones up to a missing or empty one (a write the close cut). */
async function chunksOf(dir: FileSystemDirectoryHandle): Promise<File[]> {
  const files: File[] = []
  for (let n = 1; ; n++) {
    const file = await dir
      .getFileHandle(String(n))
      .then((handle) => handle.getFile())
      .catch(() => undefined)
    if (!file?.size) return files
    files.push(file)
  }
}

async function read(dir: FileSystemDirectoryHandle, id: string) {
  const about = JSON.parse(await (await (await dir.getFileHandle(ABOUT)).getFile()).text()) as Omit<
    KeptRecording,
    'id' | 'size'
  >
  const chunks = await chunksOf(dir)
  return { id, ...about, size: chunks.reduce((sum, chunk) => sum + chunk.size, 0), chunks }
}

/**
 * Recordings kept in this browser that no tab is recording or finishing: what earlier visits left
 * unfinished (a tab closed mid-recording, a crash, a failed upload), oldest first. A copy with no
 * chunk, or no `about.json` (a start cut short), has nothing to finish and is deleted.
 */
export async function listKept(): Promise<KeptRecording[]> {
  const root = await folder(false).catch(() => undefined)
  if (!root) return []
  const held = new Set(((await globalThis.navigator.locks?.query())?.held ?? []).map((lock) => lock.name))
  const found: KeptRecording[] = []
  const entries = (root as unknown as { keys(): AsyncIterable<string> }).keys()
  for await (const id of entries) {
    if (held.has(lockOf(id))) continue
    const kept = await root
      .getDirectoryHandle(id)
      .then((dir) => read(dir, id))
      .catch(() => undefined)
    if (kept?.size) found.push({ id, name: kept.name, type: kept.type, size: kept.size, startedAt: kept.startedAt })
    else await remove(id)
  }
  return found.sort((a, b) => a.startedAt - b.startedAt)
}

/**
 * Uploads a kept recording from its copy (the chunks, in order, as one File) through the engine's
 * resume, under its record: the parts already on storage are not sent again. Deletes the copy once
 * the upload is stored and verified. Undefined when another tab holds it (it finishes it), or the
 * copy is gone.
 * @throws (rejects with) the engine's error: the copy is kept, to try again.
 */
export async function finishKept(
  { id }: Pick<KeptRecording, 'id'>,
  options: UploadOptions,
): Promise<UploadResult | undefined> {
  const release = await hold(id)
  if (!release) return undefined
  try {
    const kept = await folder(false)
      .then((root) => root.getDirectoryHandle(id))
      .then((dir) => read(dir, id))
      .catch(() => undefined)
    // Gone: finished or discarded elsewhere (or the site's data cleared).
    if (!kept?.size) return undefined
    const { chunks, name, type, startedAt } = kept
    const file = new File(chunks, name, { type, lastModified: startedAt })
    const result = await upload(file, { ...options, filename: name, contentType: type, ...journalOf(id) })
    await forget(id)
    return result
  } finally {
    release()
  }
}

/**
 * Discards a kept recording: its multipart upload aborted on storage (through the upload API, or
 * with fresh token credentials), its record forgotten, its copy deleted.
 * @throws (rejects with) the engine's error when the abort failed: the copy is kept, to try again.
 */
export async function discardKept(
  id: string,
  options: Pick<TransferOptions, 'transport'> & { apiHeaders?: Record<string, string> },
): Promise<void> {
  const release = await hold(id)
  if (!release) return
  try {
    const resume = recordingResume()
    const record = await resume.store.get(id)
    if (record) await resume.discard(record, options)
    await remove(id)
  } finally {
    release()
  }
}
