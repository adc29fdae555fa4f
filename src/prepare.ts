import { UploadAbortedError, UploadError } from '../engine/index.ts'
import type { FileCheck, PrepareFile } from './upload-options.ts'

/**
 * The hook's `prepare` threw, or gave something other than a File: nothing was sent for `file`.
 * `cause`: what it threw.
 */
export class PrepareError extends UploadError {
  override name = 'PrepareError'
  /** The file as picked, which `prepare` was given. */
  declare readonly file: File

  constructor(file: File, cause: unknown) {
    super(
      `${file.name} could not be prepared for upload (${(cause as Error)?.message ?? cause}): fix the hook's prepare, or leave it out to send files as picked`,
      { cause },
    )
    Object.assign(this, { file })
  }
}

/**
 * The file to send for `picked` and its filename: what `prepare` gave, judged by `check` (the list
 * controls' check, refusing with its error), a folder's path kept with the prepared file's name at
 * its end (`.png` → `.webp`). Rejects with a {@link PrepareError} for a preparer that throws or
 * gives no File, and with `UploadAbortedError` as soon as `signal` aborts: a preparer that never
 * settles cannot hold a cancelled row.
 */
export async function prepareUpload(
  prepare: PrepareFile,
  picked: File,
  signal: AbortSignal,
  check: FileCheck | undefined,
  path: string | undefined,
) {
  if (signal.aborted) throw new UploadAbortedError()
  const file = await Promise.race([
    new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(new UploadAbortedError()))),
    (async () => {
      const file = await prepare(picked)
      if (file instanceof File) return file
      throw new TypeError(`it gave ${typeof file}, not a File`)
    })().catch((cause: unknown) => {
      throw new PrepareError(picked, cause)
    }),
  ])
  const refusal = check?.(file)
  if (refusal) throw refusal
  return { file, filename: path?.endsWith(picked.name) ? path.slice(0, -picked.name.length) + file.name : path }
}
