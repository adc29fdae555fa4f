import { useCallback, useContext, useLayoutEffect, useReducer, useRef } from 'react'
import { PauseController } from '../engine/index.ts'
import type { ServerDataOf, UploadResult } from '../protocol/wire.ts'
import { callBack } from './call-back.ts'
import { pageQueue, uploadWithinBudget } from './connection-budget.ts'
import { useLeaveWarning } from './leave-warning.ts'
import { prepareUpload } from './prepare.ts'
import { createProgressThrottle } from './progress-throttle.ts'
import { type UploadControls, useUploadControls } from './upload-controls.ts'
import { isRunning, queuedEntry, type UploadEntry, uploadListReducer } from './upload-list.ts'
import type { FileCheck, UploadToS3Options, UseS3UploadOptions } from './upload-options.ts'
import { UploaderContext } from './uploader.ts'
import { type FileDialog, useFileDialog } from './useFileDialog.tsx'

/** The hook's own options: never handed to the engine. */
const ownOptions = ({ check, warnBeforeLeaving, prepare, ...engineDefaults }: UseS3UploadOptions) => ({
  own: { check, warnBeforeLeaving, prepare },
  engineDefaults,
})

/**
 * next-s3-upload's hook result, plus list controls (`addFiles`, `retry`, `remove`, `clearEnded`).
 * `Handler`: `typeof` the server's handler, to type `metadata` and `serverData`.
 */
export interface S3Upload<Handler = unknown> extends FileDialog, UploadControls {
  /**
   * Uploads `file`, listing it in `files` at once (status `queued`, progress 0). Resolves with
   * `{ url, bucket, key, etag }`; rejects with the engine's typed error, imported from
   * `updraft-s3` (`ApiError`, `S3Error`, `NetworkError`, or an `AbortError` named error with
   * message `Upload aborted`).
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
 * next-s3-upload's hook, in token mode by default as its protocol has it: the upload API issues
 * short-lived credentials for one key and the page signs its own requests; an upload API without an
 * STS answers so, and the page then uploads presigned (asking once per page).
 * `useS3Upload({ strategy: 'presigned' })` has the upload API presign every request instead, so the
 * page holds no credentials and ships no SigV4 signing. `Handler` (`typeof` the server's handler, in one TypeScript project)
 * types `metadata` and each entry's `serverData`. Returns a hidden `FileInput` and
 * `openFileDialog` to pick files, `uploadToS3(file)` to upload one, the `files` list with each
 * upload's progress and status, and list controls (`addFiles`, `retry`, `remove`, `clearEnded`).
 * Uploads share the page's connection budget fairly and warn before the page is left while any
 * runs (`warnBeforeLeaving`).
 *
 * The hook itself never throws. `uploadToS3` rejects with the engine's typed errors, imported
 * from `updraft-s3` ({@link ApiError}, {@link S3Error}, {@link NetworkError},
 * {@link UploadAbortedError}, or {@link UploadError}); `addFiles` and `retry` never reject, their
 * outcomes say how each ended.
 * @param options - Defaults for every upload of this hook: any engine option (`api`,
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
 *       const { url } = await uploadToS3(file, { api: { request: { body: { purpose: 'avatar' } } } })
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
  useUploads<Handler>(options)

/** Told of each file stored, after its entry is `done`. */
export type OnUploaded = (result: UploadResult, file: File) => void

let lastId = 0

/**
 * {@link useS3Upload}, with `onUploaded` for the components' `onUploadComplete`. Not exported from
 * the package: a hook of the public API takes its options, nothing else.
 */
export function useUploads<Handler = unknown>(
  options: UseS3UploadOptions = {},
  onUploaded?: OnUploaded,
): S3Upload<Handler> {
  const dialog = useFileDialog()
  const [files, dispatch] = useReducer(uploadListReducer, [])

  // The latest options, read when an upload starts, so `uploadToS3` keeps one identity.
  const { own, engineDefaults } = ownOptions(options)
  const uploader = useContext(UploaderContext)
  const { prepare } = own
  const latest = useRef({ engineDefaults, uploader, onUploaded, prepare })
  useLayoutEffect(() => {
    latest.current = { engineDefaults, uploader, onUploaded, prepare }
  })

  // `check`: the list controls' check, run here on the prepared file when there is a `prepare`.
  const upload = useCallback(
    async (file: File, callOptions: UploadToS3Options = {}, replaces?: string, check?: FileCheck) => {
      const { uploader, onUploaded, prepare } = latest.current
      const { queue = pageQueue, ...hookOptions } = latest.current.engineDefaults
      const {
        api,
        signal: callerSignal,
        onProgress: callerOnProgress,
        onRetry: callerOnRetry,
        onStateChange: callerOnStateChange,
        ...engineOptions
      } = callOptions
      const request = api?.request ?? {}

      const id = `upload-${++lastId}`
      const controller = new AbortController()
      const abort = () => controller.abort()
      if (callerSignal?.aborted) abort()
      callerSignal?.addEventListener('abort', abort, { once: true })
      const pauses = new PauseController()
      dispatch({
        type: 'added',
        entry: queuedEntry(
          id,
          file,
          abort,
          { pause: () => pauses.pause(), resume: () => pauses.resume() },
          prepare ? 'preparing' : 'queued',
        ),
        replaces,
      })

      const progress = createProgressThrottle((uploaded) => dispatch({ type: 'progressed', id, uploaded }))
      let result: UploadResult
      try {
        let sent = file
        let filename = engineOptions.filename ?? hookOptions.filename
        if (prepare) {
          ;({ file: sent, filename } = await prepareUpload(prepare, file, controller.signal, check, filename))
          dispatch({ type: 'prepared', id, size: sent.size })
        }
        result = await uploadWithinBudget(
          uploader,
          sent,
          {
            ...hookOptions,
            ...engineOptions,
            filename,
            // Unnamed, the engine's default: token mode, or presigned where the API has no STS.
            strategy: engineOptions.strategy ?? hookOptions.strategy,
            api: request.url ?? hookOptions.api,
            apiBody: { ...hookOptions.apiBody, ...request.body },
            apiHeaders: { ...hookOptions.apiHeaders, ...headersRecord(request.headers) },
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
              dispatch({
                type: 'retrying',
                id,
                error: event.error instanceof Error ? event.error : new Error(String(event.error)),
              })
              ;(callerOnRetry ?? hookOptions.onRetry)?.(event)
            },
          },
          queue,
        )
        // The last throttled value lands before `done`, so the bar never skips back or stalls.
        progress.flush()
        dispatch({ type: 'finished', id, result })
      } catch (error) {
        progress.cancel()
        const reason = error instanceof Error ? error : new Error(String(error))
        dispatch({
          type: 'failed',
          id,
          error: reason,
          aborted: reason.name === 'AbortError' || controller.signal.aborted,
        })
        throw error
      } finally {
        callerSignal?.removeEventListener('abort', abort)
      }
      // Outside the upload: the file is stored whatever the callback does.
      callBack(onUploaded, result, file)
      return result
    },
    [],
  )

  // The public one takes no place to list the upload in: only a retry (upload-controls.ts) does.
  const uploadToS3 = useCallback((file: File, callOptions?: UploadToS3Options) => upload(file, callOptions), [upload])
  const resetFiles = useCallback(() => dispatch({ type: 'reset' }), [])

  const controls = useUploadControls(files, dispatch, upload, own.check, prepare !== undefined)
  useLeaveWarning(own.warnBeforeLeaving !== false && files.some(isRunning))

  // Untyped inside: `serverData` is whatever the upload API sent; `Handler` only names its type.
  return { ...dialog, ...controls, uploadToS3, files, resetFiles } as unknown as S3Upload<Handler>
}

/** next-s3-upload accepts any HeadersInit; the engine takes a plain record. */
const headersRecord = (init: HeadersInit | undefined): Record<string, string> =>
  init ? Object.fromEntries(new Headers(init)) : {}
