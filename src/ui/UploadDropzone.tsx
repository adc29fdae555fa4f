import { lazy, Suspense, useId, useRef, useState } from 'react'
import { describeLimits } from '../messages.ts'
import { UploadList } from './UploadList.tsx'
import { type UploadComponentProps, useUploader } from './useUploader.ts'

/** Props of {@link UploadDropzone}: every {@link UploadComponentProps}, plus its heading and folder button. */
export interface UploadDropzoneProps extends UploadComponentProps {
  /** The zone's heading. @default 'Upload files' */
  title?: string
  /** Offer "Choose folder" (files keep their path inside it). @default true */
  folders?: boolean
}

/**
 * A drop zone with "Choose files" (and "Choose folder"), paste, the upload API's limits said up
 * front and checked before anything is sent, and the list of uploads under it. Everything is a
 * real button: keyboard and screen readers reach it all. Styles: `updraft-s3/react/ui/styles.css`.
 *
 * Never throws: refusals and failures are shown in its rows, in words (`errorMessage`).
 * @example
 * ```tsx
 * import { UploadDropzone } from 'updraft-s3/react/ui'
 * import 'updraft-s3/react/ui/styles.css'
 *
 * <UploadDropzone
 *   title="Add photos"
 *   onUploadComplete={(result, file) => save(file.name, result.key)}
 * />
 * ```
 */
export function UploadDropzone({ title = 'Upload files', folders = true, ...props }: UploadDropzoneProps) {
  const [dropError, setDropError] = useState<string>()
  const { uploads, limits } = useUploader({
    ...props,
    onDropError: (error) =>
      setDropError(
        `Couldn't read the dropped folder (${(error as Error).message ?? error}); nothing from it was uploaded`,
      ),
  })
  const { getRootProps, getInputProps, isDragActive, open, openFolder } = uploads
  const chooseRef = useRef<HTMLButtonElement>(null)
  const id = useId()
  const hint = describeLimits(limits ?? {})

  return (
    <section
      className={classes('updraft updraft-dropzone', props.className)}
      data-theme={props.theme}
      aria-labelledby={`${id}-title`}
    >
      {/* Its real buttons open the dialogs: the zone is a labelled group, not a button holding buttons (axe: nested-interactive), and no extra tab stop. */}
      <div
        {...getRootProps({
          className: `updraft-zone${isDragActive ? ' is-drag-active' : ''}`,
          role: 'group',
          'aria-labelledby': `${id}-title`,
          tabIndex: undefined,
          onDrop: () => setDropError(undefined),
        })}
      >
        <svg className="updraft-zone-icon" viewBox="0 0 24 24" aria-hidden="true" focusable="false">
          <path d="M12 16V4m0 0L7 9m5-5 5 5M4 15v3a2 2 0 0 0 2 2h12a2 2 0 0 0 2-2v-3" />
        </svg>
        <h2 className="updraft-zone-title" id={`${id}-title`}>
          {title}
        </h2>
        <p className="updraft-drag-hint">
          {isDragActive ? 'Drop to upload' : 'Drag files or folders here, or paste them'}
        </p>
        <div className="updraft-zone-actions">
          <button
            type="button"
            className="updraft-button updraft-primary"
            ref={chooseRef}
            onClick={open}
            aria-describedby={hint ? `${id}-hint` : undefined}
          >
            Choose files
          </button>
          {folders && (
            <button type="button" className="updraft-button updraft-folder" onClick={openFolder}>
              Choose folder
            </button>
          )}
        </div>
        {hint && (
          <p className="updraft-hint" id={`${id}-hint`}>
            {hint}
          </p>
        )}
        {dropError && (
          <p className="updraft-message updraft-drop-error" role="alert">
            {dropError}
          </p>
        )}
        <input {...getInputProps()} />
        {folders && <input {...getInputProps({ directory: true })} />}
      </div>
      {props.resume && (
        <Suspense fallback={null}>
          <UnfinishedUploads resume={props.resume} onResume={(file) => void uploads.addFiles([file])} />
        </Suspense>
      )}
      <UploadList
        uploads={uploads}
        limits={limits}
        returnFocusTo={chooseRef}
        describeServerData={props.describeServerData}
      />
    </section>
  )
}

export const classes = (base: string, extra: string | undefined) => (extra ? `${base} ${extra}` : base)

/** Loaded only by pages that resume uploads (a chunk of its own in a page's bundle). */
const UnfinishedUploads = lazy(() =>
  import('./UnfinishedUploads.tsx').then((module) => ({ default: module.UnfinishedUploads })),
)
