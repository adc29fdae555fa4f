import { useCallback, useLayoutEffect, useReducer, useRef } from 'react'
import { PauseController, type Queue, type Strategy, upload, type UploadOptions, type UploadResult } from '../engine/index.ts'
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
 * `headers`), plus any engine option.
 */
export interface UploadToS3Options
  extends Omit<UploadOptions, 'endpoint' | 'body' | 'headers' | 'endpointBody' | 'endpointHeaders' | 'queue'> {
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

/** next-s3-upload's hook result, plus list controls (`addFiles`, `retry`, `remove`, `clearEnded`). */
export interface S3Upload extends FileDialog, UploadControls {
  /**
   * Uploads `file`, listing it in `files` at once (status `queued`, progress 0). Resolves with
   * `{ url, bucket, key, etag }`; rejects with the engine's typed error (`EndpointError`,
   * `S3Error`, `NetworkError`, or an `AbortError` named error with message `Upload aborted`).
   */
  uploadToS3(file: File, options?: UploadToS3Options): Promise<UploadResult>
  /** Every upload of this hook since the last reset, oldest first. */
  files: UploadEntry[]
  /**
   * Empties `files`. It aborts nothing: uploads still running carry on, their promises settle
   * as usual, and they simply no longer appear in `files`. To stop them, call each entry's
   * `abort()` first (e.g. `files.forEach((f) => f.abort())`).
   */
  resetFiles(): void
}

/** next-s3-upload's hook, token mode by default: the endpoint hands out short-lived credentials. */
export const useS3Upload = (options?: UseS3UploadOptions): S3Upload => useUploads('token', options)

/** The same hook, presigned mode by default: storage requests are signed by the endpoint. */
export const usePresignedUpload = (options?: UseS3UploadOptions): S3Upload => useUploads('presigned', options)

let lastId = 0

function useUploads(defaultStrategy: Strategy, options: UseS3UploadOptions = {}): S3Upload {
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
          endpoint: request.url ?? hookOptions.endpoint,
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
