import type { Strategy } from '../../protocol/wire.ts'

/**
 * What a page keeps of an unfinished multipart upload, so a later page (after a reload, a crash,
 * a closed laptop) can carry it on: where it lives on storage, the ticket the upload API vouches for
 * it with, and the parts storage has accepted.
 */
export interface ResumeRecord {
  /** `fileFingerprint(file, api)`: which file, sent through which upload API. */
  fingerprint: string
  strategy: Strategy
  /** The upload API the upload went through (the `api` option, as an absolute URL). */
  api: string
  bucket: string
  key: string
  region: string
  /** The store's own endpoint (a custom store), and whether it is addressed path-style. */
  storeEndpoint?: string
  forcePathStyle?: boolean
  uploadId: string
  partSize: number
  /** 0 for a stream's upload (`sizeUnknown`). */
  partCount: number
  /**
   * Recorded from a stream of unknown length (`upload()`'s `fingerprint` option): `size` and
   * `partCount` are 0, and the file that carries it on gives them.
   */
  sizeUnknown?: true
  /** The upload API's ticket for this upload (presigned: multipart ticket; token: token ticket). */
  ticket: string
  contentType: string
  /** Parts storage accepted, as this page saw them (the engine asks storage again on resume). */
  parts: Array<{ partNumber: number; etag: string }>
  /** The file, for a list of unfinished uploads (`size` 0 when `sizeUnknown`). */
  name: string
  size: number
  lastModified: number
  /** A File System Access handle (Chromium), when the upload was given one: no need to pick again. */
  handle?: FileSystemFileHandle
  /** ms since the epoch. */
  createdAt: number
  expiresAt: number
}

/** Where records live: IndexedDB in browsers (`indexedDbResumeStore`), memory elsewhere. Any async key-value store fits. */
export interface ResumeStore {
  get(fingerprint: string): Promise<ResumeRecord | undefined>
  put(record: ResumeRecord): Promise<void>
  delete(fingerprint: string): Promise<void>
  /** Every record, expired ones included (`resumeUploads().list()` leaves those out). */
  list(): Promise<ResumeRecord[]>
}

/** Records in this page's memory only: for Node, workers and tests. */
export function memoryResumeStore(): ResumeStore {
  const records = new Map<string, ResumeRecord>()
  return {
    get: async (fingerprint) => records.get(fingerprint),
    put: async (record) => void records.set(record.fingerprint, record),
    delete: async (fingerprint) => void records.delete(fingerprint),
    list: async () => [...records.values()],
  }
}

/**
 * Records in IndexedDB (database `name`, one object store), so they outlive the page. File
 * System Access handles are kept as they are (IndexedDB stores them; Chromium asks the person
 * again for permission to read the file on the next visit).
 */
export function indexedDbResumeStore(name = 'updraft-resume'): ResumeStore {
  const STORE = 'uploads'
  let opened: Promise<IDBDatabase> | undefined
  const open = () =>
    (opened ??= done(
      Object.assign(indexedDB.open(name, 1), {
        onupgradeneeded(this: IDBOpenDBRequest) {
          this.result.createObjectStore(STORE, { keyPath: 'fingerprint' })
        },
      }),
    ))
  const run = async <T>(mode: IDBTransactionMode, act: (store: IDBObjectStore) => IDBRequest<T>) =>
    done(act((await open()).transaction(STORE, mode).objectStore(STORE)))
  return {
    get: (fingerprint) => run('readonly', (store) => store.get(fingerprint)),
    put: async (record) => void (await run('readwrite', (store) => store.put(record))),
    delete: async (fingerprint) => void (await run('readwrite', (store) => store.delete(fingerprint))),
    list: () => run('readonly', (store) => store.getAll()),
  }
}

const done = <T>(request: IDBRequest<T>) =>
  new Promise<T>((resolve, reject) => {
    request.onsuccess = () => resolve(request.result)
    request.onerror = () => reject(request.error)
  })

/** IndexedDB where the runtime has it (browsers), else memory. */
export const defaultResumeStore = (): ResumeStore =>
  typeof indexedDB === 'undefined' ? memoryResumeStore() : indexedDbResumeStore()

/** How much of each end of a file the fingerprint reads. */
const EDGE = 1024 * 1024

/**
 * Which file this is, as far as resuming goes: tus-js-client's fingerprint (name, type, size,
 * lastModified, endpoint) plus a SHA-256 of the first and last MiB, so a different file with the
 * same name and size never carries on someone else's upload. Reads at most 2 MiB. Needs
 * WebCrypto (`crypto.subtle`: browsers give it to secure contexts only, https and localhost).
 */
export async function fileFingerprint(file: Blob, endpoint: string): Promise<string> {
  const { name = '', lastModified = 0 } = file as Partial<File>
  const edges = file.size <= 2 * EDGE ? file : new Blob([file.slice(0, EDGE), file.slice(-EDGE)])
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', await edges.arrayBuffer()))
  const hash = Array.from(digest, (byte) => byte.toString(16).padStart(2, '0')).join('')
  return JSON.stringify(['updraft-1', name, file.type, file.size, lastModified, endpoint, hash])
}
