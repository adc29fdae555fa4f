// `updraft-s3/react`: the hooks, next-s3-upload's names kept. Everything exported here is public API
// (api/updraft-s3-react.api.md), and only names this entry owns: the engine's errors, results and
// options are imported from `updraft-s3`, once. The modules' helpers (reducer, queues, throttles,
// formatters, the tests' uploader seam) stay internal: the components and the demo import them
// from their modules directly.

export { FileInput, type FileInputProps, type MultipleFileInputProps, type SingleFileInputProps } from './FileInput.tsx'
export { checkFile, FileRefusedError, type LimitRefusal, type UploadLimits } from './file-checks.ts'
export { describeLimits, errorMessage, type MessageContext } from './messages.ts'
export { PrepareError } from './prepare.ts'
export type { UploadControls, UploadOutcome } from './upload-controls.ts'
export type { UploadEntry, UploadStatus } from './upload-list.ts'
export type { FileCheck, PrepareFile, UploadToS3Options, UseS3UploadOptions } from './upload-options.ts'
export { type ApiInfoState, useApiInfo } from './useApiInfo.ts'
export type { Dropzone, InputProps, RootProps } from './useDropzone.ts'
export type { FileDialog } from './useFileDialog.tsx'
export { type S3Dropzone, type UseS3DropzoneOptions, useS3Dropzone } from './useS3Dropzone.ts'
export { type S3Upload, useS3Upload } from './useS3Upload.ts'
