import { type ComponentType, type CSSProperties, type RefObject, useCallback, useRef, useState } from 'react'
import { FileInput, type FileInputProps } from './FileInput.tsx'

// display:none rather than `hidden`, as next-s3-upload does: page CSS such as
// `input { display: block }` overrides the `hidden` attribute but not an inline style.
const inputDefaults: { style: CSSProperties } = { style: { display: 'none' } }

/** The file-picking part of the upload hooks' result (next-s3-upload's `FileInput` and `openFileDialog`). */
export interface FileDialog {
  /** The hidden file input bound to `openFileDialog`. The same component on every render. */
  FileInput: ComponentType<FileInputProps>
  /** Clears the input, then opens the browser's file dialog: picking the same file again fires `onChange` again. */
  openFileDialog(): void
  /** Prop getter (react-dropzone style) for callers rendering `<FileInput>` or their own input. */
  getInputProps<P extends object = Record<never, never>>(
    props?: P,
  ): { style: CSSProperties } & P & { ref: RefObject<HTMLInputElement | null> }
}

export function useFileDialog(): FileDialog {
  const inputRef = useRef<HTMLInputElement>(null)

  const openFileDialog = useCallback(() => {
    const input = inputRef.current
    if (!input) return
    // A file input fires no change event when the same file is picked twice in a row.
    input.value = ''
    input.click()
  }, [])

  const getInputProps = useCallback(
    <P extends object = Record<never, never>>(props?: P) => ({ ...inputDefaults, ...(props as P), ref: inputRef }),
    [],
  )

  // Created once per hook: a component made anew each render would remount the input every time.
  const [BoundFileInput] = useState(() => {
    // biome-ignore lint/correctness/noComponentHookFactories: made once per hook by useState's initializer, as the comment above says
    const HiddenFileInput = (props: FileInputProps) => <FileInput {...getInputProps(props)} />
    return HiddenFileInput
  })

  return { FileInput: BoundFileInput, openFileDialog, getInputProps }
}
