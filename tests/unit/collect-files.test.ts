// Files out of a drop (src/collect-files.ts): a dropped folder is walked through the entries API,
// read in batches as Chromium answers them, and each file keeps its path inside the folder.
// The entries here are step-through stand-ins: Playwright cannot drop a real folder on a page.
import { describe, expect, it } from 'vitest'
import { filesFromDrop, MAX_FOLDER_FILES, relativePathOf } from '../../src/collect-files.ts'

type Entry = { isFile: boolean; isDirectory: boolean; fullPath: string; name: string; [more: string]: unknown }

const fileEntry = (fullPath: string): Entry => ({
  isFile: true,
  isDirectory: false,
  fullPath,
  name: fullPath.split('/').pop()!,
  file: (resolve: (file: File) => void) =>
    queueMicrotask(() => resolve(new File([fullPath], fullPath.split('/').pop()!))),
})

/** A folder whose reader answers in batches of `batch`, then an empty batch, as Chromium's does. */
const folderEntry = (fullPath: string, children: Entry[], batch = 2): Entry => ({
  isFile: false,
  isDirectory: true,
  fullPath,
  name: fullPath.split('/').pop()!,
  createReader() {
    let at = 0
    return {
      readEntries(resolve: (entries: Entry[]) => void) {
        const next = children.slice(at, at + batch)
        at += batch
        queueMicrotask(() => resolve(next))
      },
    }
  },
})

const drop = (entries: Array<Entry | File>) =>
  ({
    types: ['Files'],
    files: entries.filter((entry): entry is File => entry instanceof File),
    items: entries.map((entry) => ({
      kind: 'file',
      webkitGetAsEntry: () => (entry instanceof File ? null : entry),
      getAsFile: () => (entry instanceof File ? entry : null),
    })),
  }) as unknown as DataTransfer

describe('filesFromDrop', () => {
  it('walks a dropped folder in batches; files keep their path inside it; a file dropped beside it has none', async () => {
    const loose = new File(['x'], 'loose.txt')
    const tree = folderEntry('/holiday', [
      fileEntry('/holiday/a.jpg'),
      folderEntry('/holiday/day 1', [
        fileEntry('/holiday/day 1/写真.png'),
        fileEntry('/holiday/day 1/b.jpg'),
        fileEntry('/holiday/day 1/c.jpg'),
      ]),
      fileEntry('/holiday/z.txt'),
    ])
    const files = await filesFromDrop(drop([tree, loose]))
    expect(files.map((file) => relativePathOf(file) ?? file.name)).toEqual([
      'holiday/a.jpg',
      'holiday/day 1/写真.png',
      'holiday/day 1/b.jpg',
      'holiday/day 1/c.jpg',
      'holiday/z.txt',
      'loose.txt',
    ])
    expect(relativePathOf(loose)).toBeUndefined()
  })

  it('without folders, takes the drop’s files as they are', async () => {
    const plain = [new File(['a'], 'a.txt'), new File(['b'], 'b.txt')]
    expect(await filesFromDrop(drop(plain))).toEqual(plain)
  })

  it(`stops at ${MAX_FOLDER_FILES} files, so a page never walks a whole disk`, async () => {
    const many = Array.from({ length: MAX_FOLDER_FILES + 5 }, (_, i) => fileEntry(`/big/${i}.bin`))
    expect(await filesFromDrop(drop([folderEntry('/big', many, 100)]))).toHaveLength(MAX_FOLDER_FILES)
  })

  it('rejects when the browser refuses to read an entry (the dropzone reports it)', async () => {
    const broken = {
      ...fileEntry('/d/x.bin'),
      file: (_: unknown, reject: (error: Error) => void) => reject(new Error('NotReadableError')),
    }
    await expect(filesFromDrop(drop([folderEntry('/d', [broken])]))).rejects.toThrow('NotReadableError')
  })
})
