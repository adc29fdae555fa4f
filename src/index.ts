export { useS3Upload, usePresignedUpload, type S3Upload, type UseS3UploadOptions, type UploadToS3Options } from './useS3Upload.ts'
export { FileInput, type FileInputProps, type SingleFileInputProps, type MultipleFileInputProps } from './FileInput.tsx'
export { useFileDialog, FILE_INPUT_TEST_ID, type FileDialog } from './useFileDialog.tsx'
export { useS3Dropzone, type S3Dropzone, type UseS3DropzoneOptions } from './useS3Dropzone.ts'
export { useDropzone, type Dropzone, type DropzoneOptions, type RootProps, type InputProps } from './useDropzone.ts'
export { relativePathOf, MAX_FOLDER_FILES } from './collect-files.ts'
export { uploadListReducer, isRunning, type UploadEntry, type UploadStatus, type UploadAction } from './upload-list.ts'
export { type UploadControls, type UploadOutcome, type FileCheck } from './upload-controls.ts'
export { checkFile, acceptOf, FileRefusedError, type UploadLimits, type LimitRefusal } from './file-checks.ts'
export { describeError, describeLimits, typeName, type MessageContext } from './messages.ts'
export { formatBytes, formatSpeed, formatTimeLeft } from './format.ts'
export { useEndpointInfo, type EndpointInfoState } from './useEndpointInfo.ts'
export { useLeaveWarning } from './leave-warning.ts'
export { createProgressThrottle, PROGRESS_INTERVAL_MS, type ProgressThrottle } from './progress-throttle.ts'
export { pageQueue, PAGE_CONNECTIONS, type Uploader } from './connection-budget.ts'
export { createFairQueue, type FairQueue, type Lane } from './fair-queue.ts'
// The engine's results and errors, so a React page needs one import.
export {
  UploadError,
  S3Error,
  EndpointError,
  NetworkError,
  UploadAbortedError,
  isUploadError,
  createQueue,
  type Queue,
  type UploadResult,
  type UploadOptions,
  type InfoReply,
} from '../engine/index.ts'
