import { useId, useRef } from 'react'
import { describeLimits } from '../messages.ts'
import { classes } from './UploadDropzone.tsx'
import { UploadList } from './UploadList.tsx'
import { type UploadComponentProps, useUploader } from './useUploader.ts'

/** Props of {@link UploadButton}: every {@link UploadComponentProps}, plus its label. */
export interface UploadButtonProps extends UploadComponentProps {
  /** The button's text. @default 'Upload files' */
  label?: string
}

/**
 * One button that opens the file dialog (files dropped or pasted on it count too), the
 * upload API's limits beside it, and the list of uploads under it: for a form or a toolbar.
 *
 * Never throws: refusals and failures are shown in its rows, in words (`errorMessage`).
 * @example
 * ```tsx
 * import { UploadButton } from 'updraft-s3/react/ui'
 * import 'updraft-s3/react/ui/styles.css'
 *
 * <UploadButton label="Attach files" strategy="token" api="/api/s3-upload" />
 * ```
 */
export function UploadButton({ label = 'Upload files', ...props }: UploadButtonProps) {
  const { uploads, limits } = useUploader(props)
  const { getRootProps, getInputProps, isDragActive, open } = uploads
  const buttonRef = useRef<HTMLButtonElement>(null)
  const id = useId()
  const hint = describeLimits(limits ?? {})

  return (
    <div className={classes('updraft updraft-upload-button', props.className)} data-theme={props.theme}>
      {/* The button inside opens the dialog: the row is a group, not a button holding a button (axe: nested-interactive). */}
      <div
        {...getRootProps({
          className: `updraft-button-row${isDragActive ? ' is-drag-active' : ''}`,
          role: 'group',
          tabIndex: undefined,
        })}
      >
        <button
          type="button"
          className="updraft-button updraft-primary"
          ref={buttonRef}
          onClick={open}
          aria-describedby={hint ? `${id}-hint` : undefined}
        >
          {label}
        </button>
        {hint && (
          <span className="updraft-hint" id={`${id}-hint`}>
            {hint}
          </span>
        )}
        <input {...getInputProps()} />
      </div>
      <UploadList
        uploads={uploads}
        limits={limits}
        returnFocusTo={buttonRef}
        describeServerData={props.describeServerData}
      />
    </div>
  )
}
