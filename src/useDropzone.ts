import {
  type ChangeEvent,
  type ClipboardEvent,
  type CSSProperties,
  type DragEvent,
  type KeyboardEvent,
  type RefObject,
  type SyntheticEvent,
  useCallback,
  useEffect,
  useRef,
  useState,
} from 'react'
import { carriesFiles, filesFromDrop, filesFromPaste } from './collect-files.ts'

export interface DropzoneOptions {
  /** Files dropped on the root, pasted, or picked through an input from `getInputProps`, folders walked. */
  onFiles(files: File[]): void
  /** A dropped folder could not be read (the browser refused an entry). */
  onError?(error: unknown): void
  /** The file inputs' `accept` (e.g. from the upload API's `allowedTypes`). */
  accept?: string
  /** Also take files pasted anywhere on the page, not only while focus is inside the root. Pastes into text fields are left alone. @default false */
  pasteAnywhere?: boolean
  /** The file input's ref, when the caller already has one (the hook shares `useFileDialog`'s). */
  inputRef?: RefObject<HTMLInputElement | null>
}

/**
 * What `getRootProps` adds, as react-dropzone's does: `role="button"` and `tabIndex={0}` (a `role`
 * or `tabIndex` you pass wins: a root holding its own buttons passes `role: 'group', tabIndex:
 * undefined`), Space/Enter on the focused root open the file dialog, and drag,
 * drop and paste handlers. Handlers you pass run first; `event.stopPropagation()` in one skips ours.
 */
export interface RootProps {
  role: string
  /** 0, or what you pass (`undefined`: not in the tab order). */
  tabIndex?: number
  onKeyDown(event: KeyboardEvent<HTMLElement>): void
  onDragEnter(event: DragEvent<HTMLElement>): void
  onDragOver(event: DragEvent<HTMLElement>): void
  onDragLeave(event: DragEvent<HTMLElement>): void
  onDrop(event: DragEvent<HTMLElement>): void
  onPaste(event: ClipboardEvent<HTMLElement>): void
  /** A callback ref: fits a ref of any element type. */
  ref(element: HTMLElement | null): void
}

/** What `getInputProps` returns: a hidden multiple file input, or with `{ directory: true }` a folder input. */
export interface InputProps {
  type: 'file'
  multiple: true
  accept?: string
  tabIndex: -1
  style: CSSProperties
  onChange(event: ChangeEvent<HTMLInputElement>): void
  onClick(event: SyntheticEvent<HTMLInputElement>): void
  ref: RefObject<HTMLInputElement | null>
}

/** The drop, paste and pick part of {@link useS3Dropzone}'s result: react-dropzone's prop getters. */
export interface Dropzone {
  /** Spread on the element that takes drops and pastes (react-dropzone's prop getter). */
  getRootProps<P extends object = Record<never, never>>(props?: P): Omit<P, keyof RootProps> & RootProps
  /**
   * Spread on an `<input>`: the hidden file input `open()` clicks; with `{ directory: true }` the
   * folder input `openFolder()` clicks (files keep their path inside the folder).
   */
  getInputProps<P extends object = Record<never, never>>(
    props?: P & { directory?: boolean },
  ): Omit<P, keyof InputProps | 'directory'> & InputProps
  /** Files are being dragged over the root. */
  isDragActive: boolean
  /** Opens the file dialog (the value cleared first, so the same file can be picked again). */
  open(): void
  /** Opens the folder dialog. */
  openFolder(): void
}

const hidden: CSSProperties = { display: 'none' }

/** Opens the file dialog of `input`. */
function openInput(input: HTMLInputElement | null) {
  if (!input) return
  // A file input fires no change event when the same file is picked twice in a row.
  input.value = ''
  input.click()
}

/** react-dropzone's headless shape: prop getters for a root and an input, drag state, `open()`. */
export function useDropzone(options: DropzoneOptions): Dropzone {
  const latest = useRef(options)
  latest.current = options
  const ownInputRef = useRef<HTMLInputElement>(null)
  const inputRef = options.inputRef ?? ownInputRef
  const folderRef = useRef<HTMLInputElement>(null)
  const rootRef = useRef<HTMLElement | null>(null)
  const setRoot = useCallback((element: HTMLElement | null) => void (rootRef.current = element), [])
  const [isDragActive, setDragActive] = useState(false)
  // dragenter/dragleave fire for every child crossed, and Firefox fires enter twice on the same
  // element (react-dropzone's dragTargetsRef): a counter drifts, a set of entered elements does not.
  const targets = useRef<EventTarget[]>([])

  const deliver = useCallback((files: File[]) => {
    if (files.length > 0) latest.current.onFiles(files)
  }, [])

  const open = useCallback(() => openInput(inputRef.current), [inputRef])
  const openFolder = useCallback(() => openInput(folderRef.current), [])

  useEffect(() => {
    // A file dropped next to the root would make the browser open it, leaving the page and every
    // upload running on it. Drops outside the root do nothing instead.
    const refuse = (event: globalThis.DragEvent) => {
      if (carriesFiles(event.dataTransfer) && !rootRef.current?.contains(event.target as Node)) {
        event.preventDefault()
        if (event.dataTransfer) event.dataTransfer.dropEffect = 'none'
      }
    }
    const paste = (event: globalThis.ClipboardEvent) => {
      if (!latest.current.pasteAnywhere || event.defaultPrevented || isEditable(event.target)) return
      const files = filesFromPaste(event.clipboardData)
      if (files.length === 0) return
      event.preventDefault()
      deliver(files)
    }
    document.addEventListener('dragover', refuse)
    document.addEventListener('drop', refuse)
    document.addEventListener('paste', paste)
    return () => {
      document.removeEventListener('dragover', refuse)
      document.removeEventListener('drop', refuse)
      document.removeEventListener('paste', paste)
    }
  }, [deliver])

  const getRootProps = useCallback(
    <P extends object = Record<never, never>>(props?: P) => {
      const theirs = (props ?? {}) as Partial<RootProps> & object
      const own: RootProps = {
        role: theirs.role ?? 'button',
        tabIndex: 'tabIndex' in theirs ? theirs.tabIndex : 0,
        onKeyDown: compose(theirs.onKeyDown, (event) => {
          // Only on the root itself: a key on a button or field inside it is theirs.
          if (event.target !== rootRef.current) return
          if (event.key === ' ' || event.key === 'Enter') {
            event.preventDefault() // Space would scroll the page
            open()
          }
        }),
        onDragEnter: compose(theirs.onDragEnter, (event) => {
          if (!carriesFiles(event.dataTransfer)) return
          event.preventDefault()
          if (!targets.current.includes(event.target)) targets.current = [...targets.current, event.target]
          setDragActive(true)
        }),
        onDragOver: compose(theirs.onDragOver, (event) => {
          if (!carriesFiles(event.dataTransfer)) return
          event.preventDefault() // without it the browser refuses the drop
          event.dataTransfer.dropEffect = 'copy'
        }),
        onDragLeave: compose(theirs.onDragLeave, (event) => {
          if (!carriesFiles(event.dataTransfer)) return
          // Left: the element the pointer left, and any that is no longer inside the root.
          const root = event.currentTarget
          targets.current = targets.current.filter((target) => target !== event.target && root.contains(target as Node))
          if (targets.current.length === 0) setDragActive(false)
        }),
        onDrop: compose(theirs.onDrop, (event) => {
          if (!carriesFiles(event.dataTransfer)) return
          event.preventDefault()
          targets.current = []
          setDragActive(false)
          filesFromDrop(event.dataTransfer).then(deliver, (error: unknown) => latest.current.onError?.(error))
        }),
        onPaste: compose(theirs.onPaste, (event) => {
          const files = filesFromPaste(event.clipboardData)
          if (files.length === 0 || isEditable(event.target)) return
          event.preventDefault()
          deliver(files)
        }),
        ref: setRoot,
      }
      return { ...props, ...own } as Omit<P, keyof RootProps> & RootProps
    },
    [deliver, setRoot, open],
  )

  const getInputProps = useCallback(
    <P extends object = Record<never, never>>(props?: P & { directory?: boolean }) => {
      const { directory, ...theirs } = (props ?? {}) as Partial<InputProps> & { directory?: boolean }
      const own: InputProps = {
        type: 'file',
        multiple: true,
        accept: latest.current.accept,
        tabIndex: -1,
        style: hidden,
        onChange: compose(theirs.onChange, (event) => deliver(Array.from(event.target.files ?? []))),
        // The click that opens the dialog must not bubble to a root that opens it again.
        onClick: compose(theirs.onClick, (event) => event.stopPropagation()),
        ref: directory ? folderRef : inputRef,
      }
      // Chromium, Firefox and Safari pick folders with `webkitdirectory` (React passes it through as is).
      return {
        ...own,
        ...theirs,
        ...(directory ? { webkitdirectory: '' } : {}),
        onChange: own.onChange,
        onClick: own.onClick,
        ref: own.ref,
      } as Omit<P, keyof InputProps | 'directory'> & InputProps
    },
    [deliver, inputRef],
  )

  return { getRootProps, getInputProps, isDragActive, open, openFolder }
}

/** The caller's handler first; ours unless it stopped propagation (react-dropzone's rule). */
function compose<E extends SyntheticEvent>(theirs: ((event: E) => void) | undefined, ours: (event: E) => void) {
  return (event: E) => {
    theirs?.(event)
    if (!event.isPropagationStopped()) ours(event)
  }
}

/** Text fields take pastes for themselves. */
function isEditable(target: EventTarget | null): boolean {
  const element = target as HTMLElement | null
  return (
    !!element &&
    (element.isContentEditable ||
      element.tagName === 'INPUT' ||
      element.tagName === 'TEXTAREA' ||
      element.tagName === 'SELECT')
  )
}
