// `updraft-s3/react`: the hooks, next-s3-upload's names kept. Everything exported here is public API
// (api/updraft-s3-react.api.md); the modules' helpers (reducer, queues, throttles, formatters, test
// ids) stay internal: the components and the demo import them from their modules directly.
export { useS3Upload, usePresignedUpload, type S3Upload, type UseS3UploadOptions, type UploadToS3Options } from './useS3Upload.ts'
export { FileInput, type FileInputProps, type SingleFileInputProps, type MultipleFileInputProps } from './FileInput.tsx'
export type { FileDialog } from './useFileDialog.tsx'
export { useS3Dropzone, type S3Dropzone, type UseS3DropzoneOptions } from './useS3Dropzone.ts'
export type { Dropzone, RootProps, InputProps } from './useDropzone.ts'
export type { UploadEntry, UploadStatus } from './upload-list.ts'
export type { UploadControls, UploadOutcome, FileCheck } from './upload-controls.ts'
export type { Uploader } from './connection-budget.ts'
export { checkFile, FileRefusedError, type UploadLimits, type LimitRefusal } from './file-checks.ts'
export { describeError, describeLimits, type MessageContext } from './messages.ts'
export { useEndpointInfo, type EndpointInfoState } from './useEndpointInfo.ts'
// The engine's results and errors, so a React page needs one import.
export {
  UploadError,
  S3Error,
  ApiError,
  NetworkError,
  UploadAbortedError,
  isUploadError,
  createQueue,
  type Queue,
  type UploadResult,
  type UploadOptions,
  type InfoReply,
} from '../engine/index.ts'
