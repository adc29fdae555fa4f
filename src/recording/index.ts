// `updraft-s3/react/recording`: record the camera, the microphone or the screen and upload while
// recording. An entry of its own, so a page that does not record ships none of it. Everything
// exported here is public API (api/updraft-s3-react-recording.api.md). The component's styles are
// in `updraft-s3/react/ui/styles.css`.

export { RecordingError, type RecordingFailure } from './errors.ts'
export type { RecordingSource } from './media-source.ts'
export { RecordButton, type RecordButtonProps } from './RecordButton.tsx'
export type { RecordingEnd, RecordingOptions } from './recorder-stream.ts'
export {
  type RecordingStatus,
  type RecordingUpload,
  type UnfinishedRecording,
  type UseRecordingUploadOptions,
  useRecordingUpload,
} from './useRecordingUpload.ts'
