import { acceptOf, checkFile, type UploadLimits } from './file-checks.ts'
import type { UseS3UploadOptions } from './upload-options.ts'
import { type Dropzone, useDropzone } from './useDropzone.ts'
import { type OnUploaded, type S3Upload, useUploads } from './useS3Upload.ts'

/** Options of {@link useS3Dropzone}: the upload hook's, plus what the dropzone takes. */
export interface UseS3DropzoneOptions extends UseS3UploadOptions {
  /**
   * The upload API's limits (`GET {api}/info` reports them; `useApiInfo` asks): files
   * breaking them are listed as refused, with the reason, before any request leaves the page,
   * and the file inputs' `accept` follows `allowedTypes`. @default none: the upload API alone decides
   */
  limits?: UploadLimits
  /** What happens to files dropped, pasted or picked. @default `addFiles`: each is checked and uploaded */
  onFiles?: (files: File[]) => void
  /** Also take files pasted anywhere on the page (not into a text field). @default false */
  pasteAnywhere?: boolean
  /** A dropped folder could not be read (the browser refused an entry); nothing of that drop is uploaded. @default none */
  onDropError?: (error: unknown) => void
}

/** The upload hook with react-dropzone's prop getters: drop (folders too), paste and pick, checked first. */
export interface S3Dropzone extends Omit<S3Upload, 'getInputProps'>, Dropzone {}

/**
 * `useS3Upload` plus `getRootProps`, `getInputProps`, `isDragActive`, `open` and `openFolder`,
 * with files checked against the upload API's limits before anything is sent. Token mode by
 * default, as `useS3Upload` (presigned where the upload API has no STS); pass `strategy: 'presigned'`
 * for presigned mode. Dropped and picked
 * folders are walked, and each file is sent with its path inside the folder as its filename.
 *
 * Never throws: refused files and failed uploads are entries in `files` with their error.
 * @example
 * ```tsx
 * import { errorMessage, useApiInfo, useS3Dropzone } from 'updraft-s3/react'
 *
 * export function Dropzone() {
 *   const info = useApiInfo()
 *   const limits = info.state === 'ready' ? info.info : undefined
 *   const { getRootProps, getInputProps, isDragActive, open, files } = useS3Dropzone({ limits })
 *   return (
 *     <div {...getRootProps({ className: isDragActive ? 'zone over' : 'zone' })}>
 *       <input {...getInputProps()} />
 *       <button onClick={open}>Choose files</button> or drop them here
 *       {files.map((entry) => (
 *         <p key={entry.id}>{entry.file.name}: {entry.error ? errorMessage(entry.error, { file: entry.file, limits }) : `${entry.progress}%`}</p>
 *       ))}
 *     </div>
 *   )
 * }
 * ```
 */
export function useS3Dropzone(options?: UseS3DropzoneOptions): S3Dropzone {
  return useDropzoneUploads(options)
}

/**
 * {@link useS3Dropzone}, with `onUploaded` for the components' `onUploadComplete` (src/ui/).
 * Not exported from the package: a hook of the public API takes its options, nothing else.
 */
export function useDropzoneUploads(
  { limits, onFiles, pasteAnywhere, onDropError, ...options }: UseS3DropzoneOptions = {},
  onUploaded?: OnUploaded,
): S3Dropzone {
  const uploads = useUploads(
    { ...options, check: options.check ?? (limits && ((file) => checkFile(file, limits))) },
    onUploaded,
  )
  const dropzone = useDropzone({
    onFiles: onFiles ?? uploads.addFiles,
    accept: acceptOf(limits?.allowedTypes),
    pasteAnywhere,
    onError: onDropError,
    // One input for both: `openFileDialog()` and `open()` click the same element.
    inputRef: uploads.getInputProps().ref,
  })
  return { ...uploads, ...dropzone }
}
