// `updraft-s3/react`: the hooks, next-s3-upload's names kept. Everything exported here is public API
// (api/updraft-s3-react.api.md), and only names this entry owns: the engine's errors, results and
// options are imported from `updraft-s3`, once. The modules' helpers (reducer, queues, throttles,
// formatters, the tests' uploader seam) stay internal: the components and the demo import them
// from their modules directly.
export { useS3Upload, type S3Upload } from './useS3Upload.ts'
export type { UseS3UploadOptions, UploadToS3Options, FileCheck, PrepareFile } from './upload-options.ts'
export { FileInput, type FileInputProps, type SingleFileInputProps, type MultipleFileInputProps } from './FileInput.tsx'
export type { FileDialog } from './useFileDialog.tsx'
export { useS3Dropzone, type S3Dropzone, type UseS3DropzoneOptions } from './useS3Dropzone.ts'
export type { Dropzone, RootProps, InputProps } from './useDropzone.ts'
export type { UploadEntry, UploadStatus } from './upload-list.ts'
export type { UploadControls, UploadOutcome } from './upload-controls.ts'
export { PrepareError } from './prepare.ts'
export { checkFile, FileRefusedError, type UploadLimits, type LimitRefusal } from './file-checks.ts'
export { errorMessage, describeLimits, type MessageContext } from './messages.ts'
export { useApiInfo, type ApiInfoState } from './useApiInfo.ts'
