// Driving the demo page (demo/page) as a person would: its own button, its rows, its links.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Locator, Page } from 'playwright-core'
import { testBytes, testBytesOf } from '../../dev/s3-client.ts'

export const MiB = 1024 * 1024

/** Statuses (the hook's) after which a row never changes again. */
const SETTLED = ['done', 'error', 'aborted'].map((status) => `[data-status=${status}]`).join(',')

/** Opens the page and waits until it knows the server's capabilities and limits (its /info reply). */
export async function openDemo(page: Page, url: string): Promise<void> {
  const info = page.waitForResponse((response) => new URL(response.url()).pathname.endsWith('/info'))
  await page.goto(url)
  await info
  await page.getByText('Asking the server…').waitFor({ state: 'detached' })
}

/**
 * Caps the page's upload rate through DevTools (Chromium throttles request bodies too), so a
 * loopback upload lasts long enough to be caught mid-way. Bytes per second; -1 lifts the cap.
 */
export async function throttleUploads(page: Page, bytesPerSecond: number, offline = false): Promise<void> {
  const cdp = await page.context().newCDPSession(page)
  await cdp.send('Network.enable')
  await cdp.send('Network.emulateNetworkConditions', {
    offline,
    latency: 0,
    downloadThroughput: -1,
    uploadThroughput: bytesPerSecond,
  })
}

/**
 * Clicks "Choose files" (or "Choose folder", given a folder's path) and answers the dialog it
 * opens, as a person picking files would.
 */
export async function pickFiles(page: Page, files: string[] | FilePayload[], button = 'Choose files'): Promise<void> {
  const [chooser] = await Promise.all([
    page.waitForEvent('filechooser'),
    page.getByRole('button', { name: button }).click(),
  ])
  await chooser.setFiles(files)
}

/** Every row for a file name, in list order (a retried file's row keeps its place). */
export const rowsOf = (page: Page, name: string): Locator =>
  page.getByTestId('upload-row').filter({ has: page.locator('.updraft-name').getByText(name, { exact: true }) })

export interface SettledRow {
  /** The hook's status: done, error or aborted. */
  status: string
  /** What the row says it is: done, failed, refused, cancelled (src/ui/row-state.ts). */
  state: string
  /** The bar's aria-valuenow; 0 for a refused file (it has no bar). */
  percent: number
  /** The row's visible text (name, sizes, status, error message). */
  text: string
  /** The object's URL, from the row's link; set when done. */
  url?: string
}

/** Waits until the row has ended (done, error or aborted) and reads what it shows. */
export async function settle(row: Locator, timeout = 45_000): Promise<SettledRow> {
  await row.and(row.page().locator(SETTLED)).waitFor({ timeout })
  const link = row.locator('a.updraft-link')
  return {
    status: (await row.getAttribute('data-status')) ?? '',
    state: (await row.getAttribute('data-state')) ?? '',
    percent: await percentOf(row),
    text: await row.innerText(),
    url: (await link.count()) > 0 ? ((await link.getAttribute('href')) ?? undefined) : undefined,
  }
}

/** The row's progress bar value, 0..100 (0 without a bar). */
export const percentOf = async (row: Locator): Promise<number> => {
  const bar = row.getByRole('progressbar')
  return (await bar.count()) === 0 ? 0 : Number(await bar.getAttribute('aria-valuenow'))
}

/** What the row says it is doing (src/ui/row-state.ts): queued, uploading, finishing, retrying, paused, … */
/** The speed a row's or the summary's text tells ("1.3 MiB/s", "768 KiB/s"), in bytes per second. */
export function speedTold(text: string): number {
  const match = /([\d.]+) (B|KiB|MiB)\/s/.exec(text)
  if (!match) throw new Error(`no speed in "${text}"`)
  return Number(match[1]) * { B: 1, KiB: 1024, MiB }[match[2] as 'B' | 'KiB' | 'MiB']
}

export const stateOf = async (row: Locator): Promise<string> => (await row.getAttribute('data-state')) ?? ''

/** `http://host:port/{bucket}/{key}` (path-style, as the app's stores use) → the key. */
export function keyFromObjectUrl(url: string, bucket: string): string {
  const { pathname } = new URL(url)
  const prefix = `/${bucket}/`
  if (!pathname.startsWith(prefix)) throw new Error(`not a path-style URL in bucket ${bucket}: ${url}`)
  return decodeURIComponent(pathname.slice(prefix.length))
}

/** Playwright's in-memory file for a file chooser (its type is not exported by playwright-core). */
export interface FilePayload {
  name: string
  mimeType: string
  buffer: Buffer
}

/** A file made in memory for the chooser: `size` deterministic bytes (testBytes with `seed`). */
export const filePayload = (name: string, mimeType: string, size: number, seed: number): FilePayload => {
  // A PDF or JPEG starts as one does: the upload API checks a file's first bytes against its type.
  const bytes = testBytesOf(mimeType, size, seed)
  return { name, mimeType, buffer: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) }
}

export interface TestFiles {
  /** Writes `size` deterministic bytes (testBytes with `seed`) as `name`; returns its path. */
  write(name: string, size: number, seed: number): Promise<string>
  remove(): Promise<void>
}

/**
 * Files on disk for the file chooser: Playwright sends paths without copying them through the
 * DevTools protocol (which refuses buffers over 50 MB), and names them by their base name.
 */
export async function testFiles(): Promise<TestFiles> {
  const folder = await mkdtemp(join(tmpdir(), 'updraft-demo-files-'))
  let count = 0
  return {
    async write(name, size, seed) {
      // One folder per file, so two tests may use the same name with different bytes.
      const directory = join(folder, String(++count))
      await mkdir(directory)
      await writeFile(join(directory, name), testBytes(size, seed))
      return join(directory, name)
    },
    remove: () => rm(folder, { recursive: true, force: true }),
  }
}

/** What the page's resume journal holds for one upload (engine/resume: its record in IndexedDB). */
export interface ResumeRecord {
  uploadId: string
  parts: Array<{ partNumber: number; etag: string }>
}

/** Every upload record in the page's resume journal (the page has opened the database by then). */
export const resumeRecords = (page: { evaluate<R>(fn: () => Promise<R>): Promise<R> }): Promise<ResumeRecord[]> =>
  page.evaluate(
    () =>
      new Promise<ResumeRecord[]>((resolve, reject) => {
        const opened = indexedDB.open('updraft-resume')
        opened.onerror = () => reject(opened.error)
        opened.onsuccess = () => {
          const all = opened.result.transaction('uploads').objectStore('uploads').getAll()
          all.onsuccess = () => {
            opened.result.close()
            resolve(all.result)
          }
        }
      }),
  )
