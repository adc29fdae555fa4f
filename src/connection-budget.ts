import { createQueue, type Queue, type UploadOptions, type UploadResult } from '../engine/index.ts'

/** Connections to storage a page keeps open at once, all files together (the engine's own partConcurrency default). */
export const PAGE_CONNECTIONS = 4

/** Shared by every hook on the page that is not given its own `queue`. */
export const pageQueue: Queue = createQueue(PAGE_CONNECTIONS)

/**
 * Files started at once per connection queue. Without it, 100 large files would make the
 * endpoint create 100 multipart uploads (or issue 100 hour-long tokens) up front, most waiting
 * idle for a connection, and all left behind on storage if the page closes.
 */
const startedUploads = new WeakMap<Queue, Queue>()

/** The engine's `upload` signature; tests inject a stub here. */
export type Uploader = (file: File, options: UploadOptions) => Promise<UploadResult>

/**
 * Runs one upload inside the page's connection budget: the engine takes a slot of `queue` for
 * every request that carries bytes (a single PUT or each part), so N files never open more
 * than the budget's connections to storage.
 */
export function uploadWithinBudget(upload: Uploader, file: File, options: UploadOptions, queue: Queue): Promise<UploadResult> {
  let started = startedUploads.get(queue)
  if (!started) startedUploads.set(queue, (started = createQueue(PAGE_CONNECTIONS)))
  return started.run(() => upload(file, { ...options, queue }), options.signal)
}
