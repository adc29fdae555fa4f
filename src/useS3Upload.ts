import { useCallback, useLayoutEffect, useReducer, useRef } from 'react'
import { type MetadataOf, PauseController, type Queue, type ServerDataOf, type Strategy, upload, type UploadOptions, type UploadResult } from '../engine/index.ts'
import { pageQueue, type Uploader, uploadWithinBudget } from './connection-budget.ts'
import { createProgressThrottle } from './progress-throttle.ts'
import { type FileDialog, useFileDialog } from './useFileDialog.tsx'
import { queuedEntry, type UploadEntry, uploadListReducer } from './upload-list.ts'
import { useLeaveWarning } from './leave-warning.ts'
import { isRunning } from './upload-list.ts'
import { type FileCheck, type UploadControls, useUploadControls } from './upload-controls.ts'

/** Defaults for every `uploadToS3` call of one hook: any engine option, plus two seams. */
export interface UseS3UploadOptions extends Omit<UploadOptions, 'signal' | 'onProgress' | 'pauseSignal'> {
  /**
   * The connection budget shared by this hook's uploads. Default: one queue of 4 shared by every
   * hook on the page, so many files never open more than 4 connections to storage together.
   */
  queue?: Queue
  /** What moves the bytes. @default the engine's `upload`; tests pass a stub */
  uploader?: Uploader
  /**
   * Runs on each file `addFiles` gets, before any request: an Error lists the file as refused
   * with it, and nothing is sent. `useS3Dropzone` passes the endpoint's limits here
   * (src/file-checks.ts). @default none: the endpoint alone decides
   */
  check?: FileCheck
  /** Ask before the page is left or reloaded while uploads run. @default true */
  warnBeforeLeaving?: boolean
}

/** The hook's own options: never handed to the engine. */
const ownOptions = ({ check, warnBeforeLeaving, ...engineDefaults }: UseS3UploadOptions) => ({
  own: { check, warnBeforeLeaving },
  engineDefaults,
})

/**
 * Per-upload options: next-s3-upload's `endpoint.request` form (its names kept: `url`, `body`,
 * `headers`), plus any engine option but `pauseSignal` (the entry's `pause()` and `resume()`).
 */
export interface UploadToS3Options<Handler = unknown>
  extends Omit<UploadOptions<MetadataOf<Handler>>, 'endpoint' | 'body' | 'headers' | 'endpointBody' | 'endpointHeaders' | 'queue' | 'pauseSignal'> {
  /** Where and what to ask the endpoint for this upload, in next-s3-upload's form. @default the hook's */
  endpoint?: {
    request?: {
      /** @default the hook's `endpoint`, else '/api/s3-upload' */
      url?: string
      /** Merged into the endpoint request, over the hook's `endpointBody`. */
      body?: Record<string, unknown>
      /** Sent to the endpoint only, over the hook's `endpointHeaders`. */
      headers?: HeadersInit
    }
  }
}

/**
 * next-s3-upload's hook result, plus list controls (`addFiles`, `retry`, `remove`, `clearEnded`).
 * `Handler`: `typeof` the server's handler, to type `metadata` and `serverData`.
 */
export interface S3Upload<Handler = unknown> extends FileDialog, UploadControls {
  /**
   * Uploads `file`, listing it in `files` at once (status `queued`, progress 0). Resolves with
   * `{ url, bucket, key, etag }`; rejects with the engine's typed error (`ApiError`,
   * `S3Error`, `NetworkError`, or an `AbortError` named error with message `Upload aborted`).
   * @throws {@link ApiError}, {@link S3Error}, {@link NetworkError}, {@link UploadAbortedError}
   * or {@link UploadError}, as the promise's rejection; the entry in `files` holds the same error.
   */
  uploadToS3(file: File, options?: UploadToS3Options<Handler>): Promise<UploadResult<ServerDataOf<Handler>>>
  /** Every upload of this hook since the last reset, oldest first. */
  files: UploadEntry<ServerDataOf<Handler>>[]
  /**
   * Empties `files`. It aborts nothing: uploads still running carry on, their promises settle
   * as usual, and they simply no longer appear in `files`. To stop them, call each entry's
   * `abort()` first (e.g. `files.forEach((f) => f.abort())`).
   */
  resetFiles(): void
}

/**
 * next-s3-upload's hook, token mode by default: the endpoint hands out short-lived credentials
 * for one key and the page signs its own requests. `Handler` (`typeof` the server's handler, in
 * one TypeScript project) types `metadata` and each entry's `serverData`. Returns a hidden `FileInput` and
 * `openFileDialog` to pick files, `uploadToS3(file)` to upload one, the `files` list with each
 * upload's progress and status, and list controls (`addFiles`, `retry`, `remove`, `clearEnded`).
 * Uploads share the page's connection budget fairly and warn before the page is left while any
 * runs (`warnBeforeLeaving`).
 *
 * The hook itself never throws. `uploadToS3` rejects with the engine's typed errors
 * ({@link ApiError}, {@link S3Error}, {@link NetworkError}, {@link UploadAbortedError}, or
 * {@link UploadError}); `addFiles` and `retry` never reject, their outcomes say how each ended.
 * @param options - Defaults for every upload of this hook: any engine option (`endpoint`,
 * `strategy`, `partSize`, …) plus the hook's own; see {@link UseS3UploadOptions}.
 * @example
 * ```tsx
 * import { useS3Upload } from 'updraft-s3/react'
 *
 * export function Avatar() {
 *   const { FileInput, openFileDialog, uploadToS3, files } = useS3Upload()
 *   const onFile = async (file: File | undefined) => {
 *     if (!file) return
 *     try {
 *       const { url } = await uploadToS3(file, { endpoint: { request: { body: { purpose: 'avatar' } } } })
 *       console.log('stored at', url)
 *     } catch {} // the entry in `files` says what went wrong
 *   }
 *   return (
 *     <>
 *       <FileInput onChange={onFile} accept="image/*" />
 *       <button onClick={openFileDialog}>Upload a photo</button>
 *       {files.map((entry) => <p key={entry.id}>{entry.file.name}: {entry.progress}% {entry.status}</p>)}
 *     </>
 *   )
 * }
 * ```
 */
export const useS3Upload = <Handler = unknown>(options?: UseS3UploadOptions): S3Upload<Handler> =>
  useUploads('token', options) as unknown as S3Upload<Handler>

/**
 * {@link useS3Upload} in presigned mode by default: the endpoint presigns every storage request,
 * so the page needs no credentials and ships no SigV4 signing. next-s3-upload's
 * `usePresignedUpload`, with multipart uploads for large files.
 *
 * The hook itself never throws. `uploadToS3` rejects with the engine's typed errors
 * ({@link ApiError}, {@link S3Error}, {@link NetworkError}, {@link UploadAbortedError}, or
 * {@link UploadError}); `addFiles` and `retry` never reject, their outcomes say how each ended.
 * @example
 * ```tsx
 * import { usePresignedUpload } from 'updraft-s3/react'
 *
 * export function Uploads() {
 *   const { FileInput, openFileDialog, uploadToS3, files } = usePresignedUpload()
 *   const onFiles = (picked: File[]) => {
 *     for (const file of picked) uploadToS3(file).catch(() => {}) // failures show in `files`
 *   }
 *   return (
 *     <main>
 *       <FileInput multiple onChange={onFiles} />
 *       <button onClick={openFileDialog}>Upload files</button>
 *       <ul>{files.map((entry) => <li key={entry.id}>{entry.file.name}: {entry.progress}% {entry.status}</li>)}</ul>
 *     </main>
 *   )
 * }
 * ```
 */
export const usePresignedUpload = <Handler = unknown>(options?: UseS3UploadOptions): S3Upload<Handler> =>
  useUploads('presigned', options) as unknown as S3Upload<Handler>

let lastId = 0

/** Untyped inside: `serverData` is whatever the endpoint sent; the exported hooks add the types. */
function useUploads(defaultStrategy: Strategy, options: UseS3UploadOptions = {}) {
  const dialog = useFileDialog()
  const [files, dispatch] = useReducer(uploadListReducer, [])

  // The latest options, read when an upload starts, so `uploadToS3` keeps one identity.
  const { own, engineDefaults } = ownOptions(options)
  const latestOptions = useRef(engineDefaults)
  useLayoutEffect(() => {
    latestOptions.current = engineDefaults
  })

  const uploadToS3 = useCallback(async (file: File, callOptions: UploadToS3Options = {}) => {
    const { uploader = upload, queue = pageQueue, ...hookOptions } = latestOptions.current
    const {
      endpoint,
      signal: callerSignal,
      onProgress: callerOnProgress,
      onRetry: callerOnRetry,
      onStateChange: callerOnStateChange,
      ...engineOptions
    } = callOptions
    const request = endpoint?.request ?? {}

    const id = `upload-${++lastId}`
    const controller = new AbortController()
    const abort = () => controller.abort()
    if (callerSignal?.aborted) abort()
    callerSignal?.addEventListener('abort', abort, { once: true })
    const pauses = new PauseController()
    dispatch({ type: 'added', entry: queuedEntry(id, file, abort, { pause: () => pauses.pause(), resume: () => pauses.resume() }) })

    const progress = createProgressThrottle((uploaded) => dispatch({ type: 'progressed', id, uploaded }))
    try {
      const result = await uploadWithinBudget(
        uploader,
        file,
        {
          ...hookOptions,
          ...engineOptions,
          strategy: engineOptions.strategy ?? hookOptions.strategy ?? defaultStrategy,
          api: request.url ?? hookOptions.endpoint,
          endpointBody: { ...(hookOptions.endpointBody ?? hookOptions.body), ...request.body },
          endpointHeaders: { ...(hookOptions.endpointHeaders ?? hookOptions.headers), ...headersRecord(request.headers) },
          body: undefined,
          headers: undefined,
          signal: controller.signal,
          pauseSignal: pauses.signal,
          // A row waits for the network rather than failing with "Failed to fetch".
          waitForNetwork: engineOptions.waitForNetwork ?? hookOptions.waitForNetwork ?? true,
          onStateChange: (state) => {
            progress.flush()
            dispatch({ type: 'held', id, state })
            ;(callerOnStateChange ?? hookOptions.onStateChange)?.(state)
          },
          onProgress: (event) => {
            progress.push(event.loaded)
            callerOnProgress?.(event)
          },
          onRetry: (event) => {
            // The last bytes before the failure land first, so the bar holds at its true mark.
            progress.flush()
            dispatch({ type: 'retrying', id, error: event.error instanceof Error ? event.error : new Error(String(event.error)) })
            ;(callerOnRetry ?? hookOptions.onRetry)?.(event)
          },
        },
        queue,
      )
      // The last throttled value lands before `done`, so the bar never skips back or stalls.
      progress.flush()
      dispatch({ type: 'finished', id, result })
      return result
    } catch (error) {
      progress.cancel()
      const reason = error instanceof Error ? error : new Error(String(error))
      dispatch({ type: 'failed', id, error: reason, aborted: reason.name === 'AbortError' || controller.signal.aborted })
      throw error
    } finally {
      callerSignal?.removeEventListener('abort', abort)
    }
  }, [defaultStrategy])

  const resetFiles = useCallback(() => dispatch({ type: 'reset' }), [])

  const controls = useUploadControls(files, dispatch, uploadToS3, own.check)
  useLeaveWarning(own.warnBeforeLeaving !== false && files.some(isRunning))

  return { ...dialog, ...controls, uploadToS3, files, resetFiles }
}

/** next-s3-upload accepts any HeadersInit; the engine takes a plain record. */
const headersRecord = (init: HeadersInit | undefined): Record<string, string> =>
  init ? Object.fromEntries(new Headers(init)) : {}
