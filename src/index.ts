export { useS3Upload, usePresignedUpload, type S3Upload, type UseS3UploadOptions, type UploadToS3Options } from './useS3Upload.ts'
export { FileInput, type FileInputProps, type SingleFileInputProps, type MultipleFileInputProps } from './FileInput.tsx'
export { useFileDialog, FILE_INPUT_TEST_ID, type FileDialog } from './useFileDialog.tsx'
export { uploadListReducer, type UploadEntry, type UploadStatus, type UploadAction } from './upload-list.ts'
export { createProgressThrottle, PROGRESS_INTERVAL_MS, type ProgressThrottle } from './progress-throttle.ts'
export { pageQueue, PAGE_CONNECTIONS, type Uploader } from './connection-budget.ts'
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
} from '../engine/index.ts'
