import { acceptOf, checkFile, type UploadLimits } from './file-checks.ts'
import { type Dropzone, type DropzoneOptions, useDropzone } from './useDropzone.ts'
import { type S3Upload, type UseS3UploadOptions, useS3Upload } from './useS3Upload.ts'

export interface UseS3DropzoneOptions extends UseS3UploadOptions {
  /**
   * The endpoint's limits (`GET {endpoint}/info` reports them; `useEndpointInfo` asks): files
   * breaking them are listed as refused, with the reason, before any request leaves the page,
   * and the file inputs' `accept` follows `allowedTypes`. @default none: the endpoint alone decides
   */
  limits?: UploadLimits
  /** What happens to files dropped, pasted or picked. @default `addFiles`: each is checked and uploaded */
  onFiles?: (files: File[]) => void
  /** Also take files pasted anywhere on the page (not into a text field). @default false */
  pasteAnywhere?: DropzoneOptions['pasteAnywhere']
  /** A dropped folder could not be read (the browser refused an entry); nothing of that drop is uploaded. */
  onDropError?: DropzoneOptions['onError']
}

/** The upload hook with react-dropzone's prop getters: drop (folders too), paste and pick, checked first. */
export interface S3Dropzone extends Omit<S3Upload, 'getInputProps'>, Dropzone {}

/**
 * `useS3Upload` plus `getRootProps`, `getInputProps`, `isDragActive`, `open` and `openFolder`,
 * with files checked against the endpoint's limits before anything is sent. Token mode by
 * default, as `useS3Upload`; pass `strategy: 'presigned'` for presigned mode.
 */
export function useS3Dropzone({ limits, onFiles, pasteAnywhere, onDropError, ...options }: UseS3DropzoneOptions = {}): S3Dropzone {
  const uploads = useS3Upload({ ...options, check: options.check ?? (limits && ((file) => checkFile(file, limits))) })
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
