// updraft/react/ui: ready-made upload components on top of updraft/react's hook. Import their
// styles once: `import 'updraft/react/ui/styles.css'` (themed with `--updraft-*` variables).
export { UploadDropzone, type UploadDropzoneProps } from './UploadDropzone.tsx'
export { UploadButton, type UploadButtonProps } from './UploadButton.tsx'
export { UploadList, type UploadListProps } from './UploadList.tsx'
export { UploadRow, type UploadRowProps } from './UploadRow.tsx'
export { UnfinishedUploads, type UnfinishedUploadsProps } from './UnfinishedUploads.tsx'
export { rowState, overall, ROW_LABELS, type RowState, type Overall } from './row-state.ts'
export type { UploadComponentProps } from './useUploader.ts'
