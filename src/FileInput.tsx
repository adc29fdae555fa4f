import { type ChangeEvent, forwardRef, type InputHTMLAttributes } from 'react'

// Every attribute of an <input> but the three FileInput sets itself. Written out in each interface
// rather than named: `InputProps` is getInputProps()'s result (useDropzone.ts), one name per concept.

/** One file at a time: `onChange` gets the File (undefined when the dialog was cancelled), as in next-s3-upload. */
export interface SingleFileInputProps
  extends Omit<InputHTMLAttributes<HTMLInputElement>, 'type' | 'onChange' | 'multiple'> {
  multiple?: false
  onChange?: (file: File | undefined, event: ChangeEvent<HTMLInputElement>) => void
}

/** `multiple`: `onChange` gets every picked File, in the order the browser lists them. */
export interface MultipleFileInputProps
  extends Omit<InputHTMLAttributes<HTMLInputElement>, 'type' | 'onChange' | 'multiple'> {
  multiple: true
  onChange?: (files: File[], event: ChangeEvent<HTMLInputElement>) => void
}

/** Props of {@link FileInput}: one file at a time, or `multiple`. */
export type FileInputProps = SingleFileInputProps | MultipleFileInputProps

/**
 * An `<input type="file">` that hands over Files instead of an event. Every other prop (`accept`,
 * `capture`, `name`, `aria-*`, `data-*`, …) goes to the input as is. The hooks render it hidden
 * and open it through `openFileDialog()`.
 *
 * @example
 * ```tsx
 * <FileInput multiple accept="image/*" onChange={(files) => files.forEach((file) => uploadToS3(file))} />
 * ```
 */
export const FileInput = forwardRef<HTMLInputElement, FileInputProps>(function FileInput(props, ref) {
  // `onChange` is read from `props` so the union keeps single and multiple apart.
  const { onChange: _onChange, multiple, ...inputProps } = props
  const handleChange = (event: ChangeEvent<HTMLInputElement>) => {
    const files = Array.from(event.target.files ?? [])
    if (props.multiple) props.onChange?.(files, event)
    else props.onChange?.(files[0], event)
  }
  return <input {...inputProps} ref={ref} type="file" multiple={multiple} onChange={handleChange} />
})
