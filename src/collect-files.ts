/**
 * Files out of what the browser hands a page: a drop (files and whole folders), a paste, a file
 * input (with `webkitdirectory`, a folder). Files from folders keep their path inside the folder
 * ("holiday/day 1/a.jpg"), which the hook sends as the upload's filename, so default keys keep it
 * (server/key.ts cleans each segment).
 */

/** Paths of files found by walking a dropped folder (the File objects themselves do not carry them). */
const droppedPaths = new WeakMap<File, string>()

/** A dropped folder of more files than this is cut here: a page must not walk a whole disk. */
export const MAX_FOLDER_FILES = 10_000

/**
 * The path of `file` inside a dropped or picked folder (`holiday/day-1/a.jpg`), with empty, `.`
 * and `..` segments dropped; undefined for a file picked or dropped on its own.
 */
export function relativePathOf(file: File): string | undefined {
  const path = droppedPaths.get(file) ?? file.webkitRelativePath
  if (!path) return undefined
  const safe = path
    .split(/[/\\]+/)
    .filter((segment) => segment !== '' && segment !== '.' && segment !== '..')
    .join('/')
  return safe.includes('/') ? safe : undefined
}

/** Whether a drag carries files (not text or a link being dragged within the page). */
export const carriesFiles = (transfer: DataTransfer | null): boolean =>
  Array.from(transfer?.types ?? []).includes('Files')

/**
 * Every file of a drop, folders walked. The DataTransfer is emptied once the event handler
 * returns, so its entries are taken synchronously here and walked afterwards.
 */
export function filesFromDrop(transfer: DataTransfer): Promise<File[]> {
  const items = Array.from(transfer.items ?? []).filter((item) => item.kind === 'file')
  const dropped = items.map((item) => ({ entry: item.webkitGetAsEntry?.() ?? null, file: item.getAsFile() }))
  if (!dropped.some(({ entry }) => entry?.isDirectory)) return Promise.resolve(Array.from(transfer.files ?? []))
  return walkAll(dropped)
}

/** Files pasted (a screenshot, files copied in a file manager); none for pasted text. */
export const filesFromPaste = (clipboard: DataTransfer | null): File[] => Array.from(clipboard?.files ?? [])

async function walkAll(dropped: Array<{ entry: FileSystemEntry | null; file: File | null }>): Promise<File[]> {
  const files: File[] = []
  for (const { entry, file } of dropped) {
    if (entry?.isDirectory) await walk(entry, files)
    else if (file) files.push(file)
    if (files.length >= MAX_FOLDER_FILES) break
  }
  return files.slice(0, MAX_FOLDER_FILES)
}

async function walk(entry: FileSystemEntry, files: File[]): Promise<void> {
  if (files.length >= MAX_FOLDER_FILES) return
  if (entry.isFile) {
    const file = await new Promise<File>((resolve, reject) => (entry as FileSystemFileEntry).file(resolve, reject))
    droppedPaths.set(file, entry.fullPath.replace(/^\/+/, ''))
    files.push(file)
    return
  }
  const reader = (entry as FileSystemDirectoryEntry).createReader()
  // readEntries answers in batches (100 at a time in Chromium) until an empty one.
  for (;;) {
    const batch = await new Promise<FileSystemEntry[]>((resolve, reject) => reader.readEntries(resolve, reject))
    if (batch.length === 0) return
    for (const child of batch) await walk(child, files)
  }
}
