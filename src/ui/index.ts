// updraft-s3/react/ui: ready-made upload components on top of updraft-s3/react's hook. Import their
// styles once: `import 'updraft-s3/react/ui/styles.css'` (themed with `--updraft-*` variables).
// Everything exported here is public API (api/updraft-s3-react-ui.api.md); the rows and their state
// machine are the list's internals.

export { UnfinishedUploads, type UnfinishedUploadsProps } from './UnfinishedUploads.tsx'
export { UploadButton, type UploadButtonProps } from './UploadButton.tsx'
export { UploadDropzone, type UploadDropzoneProps } from './UploadDropzone.tsx'
export { UploadList, type UploadListProps } from './UploadList.tsx'
export type { UploadComponentProps } from './useUploader.ts'
