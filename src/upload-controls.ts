import { type Dispatch, useCallback, useRef } from 'react'
import type { UploadResult } from '../engine/index.ts'
import { relativePathOf } from './collect-files.ts'
import { isRunning, refusedEntry, type UploadAction, type UploadEntry } from './upload-list.ts'
import type { FileCheck, UploadToS3Options } from './upload-options.ts'

/** How a file's upload ended: settled, never rejected, so drops and clicks leave no unhandled rejection. */
export type UploadOutcome = PromiseSettledResult<UploadResult>

/** List controls of the upload hooks, on top of next-s3-upload's `uploadToS3` and `files`. Never reject. */
export interface UploadControls {
  /**
   * Runs the hook's `check` on each file and uploads the rest, in order (the order they start in).
   * A refused file is listed at once with the check's error, and no request is made for it.
   * Files from folders are sent with their path inside the folder as the filename.
   */
  addFiles(files: File[], options?: UploadToS3Options): Promise<UploadOutcome[]>
  /**
   * Uploads an ended entry's file again, as a new entry (a new id) in the old one's place: a list
   * shows the retried file where it was, not at the end, so nothing moves under the pointer.
   */
  retry(id: string, options?: UploadToS3Options): Promise<UploadOutcome | undefined>
  /** Takes an entry off the list, aborting it first if it still runs. */
  remove(id: string): void
  /** Takes every ended entry (done, failed, aborted, refused) off the list; running ones stay. */
  clearEnded(): void
}

let lastRefusal = 0

/**
 * The hook's `uploadToS3`, which lists the upload in the place of entry `replaces` when given one,
 * and runs `check` on the prepared file when the hook has a `prepare`.
 */
export type StartUpload = (
  file: File,
  options?: UploadToS3Options,
  replaces?: string,
  check?: FileCheck,
) => Promise<UploadResult>

/** The list controls a dropzone or a row needs, on top of the hook's `uploadToS3`. */
export function useUploadControls(
  files: UploadEntry[],
  dispatch: Dispatch<UploadAction>,
  upload: StartUpload,
  check: FileCheck | undefined,
  /** The hook prepares each file: `check` judges what `prepare` gives, not what was picked. */
  checkPrepared = false,
): UploadControls {
  const latest = useRef({ files, check, checkPrepared })
  latest.current = { files, check, checkPrepared }

  const start = useCallback(
    (file: File, options: UploadToS3Options = {}, replaces?: string): Promise<UploadResult> => {
      const { check, checkPrepared } = latest.current
      const refusal = checkPrepared ? undefined : check?.(file)
      if (!refusal)
        return upload(file, { filename: relativePathOf(file), ...options }, replaces, checkPrepared ? check : undefined)
      dispatch({ type: 'added', entry: refusedEntry(`refused-${++lastRefusal}`, file, refusal), replaces })
      return Promise.reject(refusal)
    },
    [dispatch, upload],
  )

  const addFiles = useCallback(
    (picked: File[], options?: UploadToS3Options) => Promise.allSettled(picked.map((file) => start(file, options))),
    [start],
  )

  const retry = useCallback(
    async (id: string, options?: UploadToS3Options) => {
      const entry = latest.current.files.find((candidate) => candidate.id === id)
      if (!entry || isRunning(entry)) return undefined
      const [outcome] = await Promise.allSettled([start(entry.file, options, id)])
      return outcome
    },
    [start],
  )

  const remove = useCallback(
    (id: string) => {
      latest.current.files.find((entry) => entry.id === id)?.abort()
      dispatch({ type: 'removed', id })
    },
    [dispatch],
  )

  const clearEnded = useCallback(() => dispatch({ type: 'clearedEnded' }), [dispatch])

  return { addFiles, retry, remove, clearEnded }
}
