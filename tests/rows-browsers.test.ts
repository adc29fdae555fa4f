// Issue 35's rows that stay put, on the `npm start` page in Chromium and in Firefox ESR
// (tests/helpers/browsers.ts), its embedded s3rver behind a slow uplink (a relay: Firefox has no
// DevTools throttling). A double click on Retry restarts that row in its place, and its second
// click, landing on the Cancel that took Retry's place, cancels nothing; a double click on Cancel
// restarts nothing. After Resume no speed or time left shows until bytes move, and then the
// summary's time left is the row's. A reload at a third of a 40 MiB upload lists the parts storage
// holds (none whole: four parts were two-thirds sent), a reload once four are whole lists them, and
// Resume sends only the others. Every upload is read back from storage and compared byte for byte.
import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import type { S3Client } from '@aws-sdk/client-s3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type RunningApp, startApp } from '../demo/app.ts'
import { BROWSER_LABELS, BROWSERS, type BrowserSession, launchBrowser, type TestPage } from '../dev/browsers.ts'
import { startLinkSwitch } from '../dev/link-switch.ts'
import { readObject, sdkClient, sha256, testBytes } from '../dev/s3-client.ts'
import { keyFromObjectUrl, MiB, resumeRecords, type TestFiles, testFiles } from './helpers/demo-page.ts'

/** The uplink the tests start at: slow enough that a 24 MiB upload is still running seconds later. */
const SLOW = 2 * MiB
const INPUT = '.updraft-zone input[type="file"]:not([webkitdirectory])'
const RUNNING = ['queued', 'uploading', 'finishing', 'retrying']

let store: RunningApp
let app: RunningApp
let link: Awaited<ReturnType<typeof startLinkSwitch>>
let client: S3Client
let files: TestFiles

beforeAll(async () => {
  files = await testFiles()
  store = await startApp({ port: 0, host: '127.0.0.1', logger: { level: 'fatal' } })
  link = await startLinkSwitch(store.embedded!.endpoint, { uploadBytesPerSecond: SLOW })
  const { credentials, bucket, region, endpoint } = store.embedded!
  app = await startApp({
    port: 0,
    host: '127.0.0.1',
    logger: { level: 'fatal' },
    config: {
      ...credentials,
      bucket,
      region,
      endpoint: link.endpoint,
      forcePathStyle: true,
      sweepEverySeconds: undefined,
    },
  })
  client = sdkClient({ endpoint, region, credentials })
})

afterAll(async () => {
  client?.destroy()
  await app?.close()
  await link?.close()
  await store?.close()
  await files?.remove()
})

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

interface Row {
  name: string
  state: string
  percent: number
  /** The row's top, in page coordinates. */
  top: number
  foot: string
  url?: string
}

/** Every row as the page shows it, in order. */
const rows = (page: TestPage): Promise<Row[]> =>
  page.evaluate(() =>
    [...document.querySelectorAll<HTMLElement>('[data-testid=upload-row]')].map((row) => ({
      name: row.querySelector('.updraft-name')!.textContent!,
      state: row.dataset.state!,
      percent: Number(row.querySelector('[role=progressbar]')?.getAttribute('aria-valuenow') ?? 0),
      top: row.getBoundingClientRect().top + window.scrollY,
      foot: (row.querySelector('.updraft-row-foot') as HTMLElement).innerText.replace(/\s+/g, ' '),
      url: row.querySelector<HTMLAnchorElement>('a.updraft-link')?.href,
    })),
  )
const rowNamed = async (page: TestPage, name: string) => (await rows(page)).find((row) => row.name === name)

async function until<T>(
  read: () => Promise<T>,
  test: (value: T) => boolean,
  what: string,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await read()
    if (test(value)) return value
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(value)}`)
    await sleep(50)
  }
}

/** The middle of the button labelled `label`, scrolled into the middle of the viewport first. */
const buttonCentre = (page: TestPage, label: string) =>
  page.evaluate((label) => {
    const button = document.querySelector<HTMLElement>(`button[aria-label="${label}"]`)!
    button.scrollIntoView({ block: 'center' })
    const box = button.getBoundingClientRect()
    return { x: box.left + box.width / 2, y: box.top + box.height / 2 }
  }, label)

/** A double click at one place; then a moment for whatever its clicks set off. */
async function doubleClick(page: TestPage, { x, y }: { x: number; y: number }) {
  await page.doubleClickAt(x, y)
  await sleep(600)
}

/** The object a done row links to holds exactly `expected`. */
async function expectStored(page: TestPage, name: string, expected: Uint8Array) {
  const row = await until(
    () => rowNamed(page, name),
    (row) => row?.state === 'done' || row?.state === 'failed',
    `${name} done`,
    120_000,
  )
  expect(row!.state, row!.foot).toBe('done')
  const key = keyFromObjectUrl(row!.url!, store.embedded!.bucket)
  expect(sha256(await readObject(client, store.embedded!.bucket, key))).toBe(sha256(expected))
}

async function openPage(session: BrowserSession): Promise<TestPage> {
  const page = await session.newPage()
  await page.goto(app.url)
  await page.waitForFunction(
    () =>
      document.querySelector('.updraft-zone') !== null && !document.body.textContent!.includes('Asking the server…'),
  )
  // Which button each click landed on, and which click of a series the browser counted it as.
  await page.evaluate(() => {
    const clicks: Array<[number, string | null]> = ((window as unknown as { clicks: unknown }).clicks = [])
    document.addEventListener(
      'click',
      (event) =>
        void clicks.push([
          event.detail,
          (event.target as Element).closest('button')?.getAttribute('aria-label') ?? null,
        ]),
      true,
    )
  })
  return page
}
const clicks = (page: TestPage) =>
  page.evaluate(() => (window as unknown as { clicks: Array<[number, string | null]> }).clicks.splice(0))

describe.each(BROWSERS)('rows that stay put, in %s', (browser) => {
  let session: BrowserSession
  beforeAll(async () => {
    session = await launchBrowser(browser)
  })
  afterAll(async () => {
    link?.setUploadRate(SLOW)
    await session?.close()
  })

  it(`${BROWSER_LABELS[browser]}: Retry keeps the row where it was; a double click on Retry or on Cancel never acts on another row`, async () => {
    link.setUploadRate(SLOW)
    const page = await openPage(session)
    const first = await files.write(`first-${browser}.bin`, 24 * MiB, 351)
    const second = await files.write(`second-${browser}.bin`, 24 * MiB, 352)
    const [a, b] = [`first-${browser}.bin`, `second-${browser}.bin`]
    await page.setInputFiles(INPUT, [first, second])
    await until(
      () => rowNamed(page, a),
      (row) => (row?.percent ?? 0) > 0,
      `${a} moving`,
    )
    await page.click(`button[aria-label="Cancel upload of ${a}"]`)
    await until(
      () => rowNamed(page, a),
      (row) => row?.state === 'cancelled',
      `${a} cancelled`,
    )
    await clicks(page)

    // A double click on a's Retry: a starts again in its own place, and the second click, on the
    // Cancel that took Retry's place, cancels nothing (it cancelled b, which had slid under the pointer).
    const retry = await buttonCentre(page, `Retry upload of ${a}`)
    const before = await rows(page)
    await doubleClick(page, retry)
    expect(await clicks(page)).toEqual([
      [1, `Retry upload of ${a}`],
      [2, `Cancel upload of ${a}`],
    ])
    const afterRetry = await rows(page)
    expect(afterRetry.map((row) => row.name)).toEqual([a, b])
    expect(afterRetry[0]!.top).toBe(before[0]!.top)
    expect(RUNNING, afterRetry[0]!.state).toContain(afterRetry[0]!.state)
    expect(RUNNING, afterRetry[1]!.state).toContain(afterRetry[1]!.state)

    // A double click on a's Cancel: a is cancelled, and the second click, on the Retry that took
    // Cancel's place, restarts nothing; b runs on.
    // The pointer has not moved: the Cancel that took Retry's place is under it.
    await doubleClick(page, retry)
    // The second click lands on Retry once the engine has ended the upload, else on Cancel again.
    const onCancel = await clicks(page)
    expect(onCancel.map(([detail]) => detail)).toEqual([1, 2])
    expect(onCancel[0]![1]).toBe(`Cancel upload of ${a}`)
    expect([`Retry upload of ${a}`, `Cancel upload of ${a}`]).toContain(onCancel[1]![1])
    const afterCancel = await rows(page)
    expect(
      afterCancel.map((row) => [
        row.name,
        row.state === 'cancelled' ? 'cancelled' : RUNNING.includes(row.state) ? 'running' : row.state,
      ]),
    ).toEqual([
      [a, 'cancelled'],
      [b, 'running'],
    ])
    expect(afterCancel[0]!.top).toBe(before[0]!.top)

    // Retried once more, both store their bytes.
    link.setUploadRate(Infinity)
    await page.click(`button[aria-label="Retry upload of ${a}"]`)
    await expectStored(page, b, testBytes(24 * MiB, 352))
    await expectStored(page, a, testBytes(24 * MiB, 351))
    expect(page.errors).toEqual([])
    await page.close()
  }, 240_000)

  it(`${BROWSER_LABELS[browser]}: after Resume no speed or time left until bytes move, never "0 B/s" or hours; the summary's time left is the row's`, async () => {
    link.setUploadRate(SLOW)
    const page = await openPage(session)
    const name = `resumed-${browser}.bin`
    await page.setInputFiles(INPUT, [await files.write(name, 96 * MiB, 353)])
    await until(
      () => rowNamed(page, name),
      (row) => / left/.test(row?.foot ?? ''),
      `${name} showing a time left`,
    )
    await page.click(`button[aria-label="Pause upload of ${name}"]`)
    await until(
      () => rowNamed(page, name),
      (row) => row?.state === 'paused',
      `${name} paused`,
    )
    await sleep(1000)
    await page.click(`button[aria-label="Resume upload of ${name}"]`)

    // Row and summary read together, in one go, every 100 ms until the row tells a speed again.
    const read = () =>
      page.evaluate(() => ({
        row: (document.querySelector('.updraft-row-foot') as HTMLElement).innerText.replace(/\s+/g, ' '),
        summary: (document.querySelector('.updraft-summary-text') as HTMLElement).innerText.replace(/\s+/g, ' '),
      }))
    const seen: Array<{ row: string; summary: string }> = []
    await until(
      async () => seen[seen.push(await read()) - 1]!,
      ({ row }) => /\/s · \d+ (s|min) left/.test(row),
      `${name} telling a speed after Resume`,
      // Through the relay the count goes back for the parts Pause cancelled and then grows in bursts:
      // a speed can take half a minute to be known (loaded, 48 MiB ended first in a full run).
      150_000,
    )
    const told = seen.findIndex(({ row }) => row.includes('/s'))
    console.log(
      `${browser} after Resume: ${told} samples without a speed ("${seen[0]!.row}"), then "${seen[told]!.row}" | "${seen[told]!.summary}"`,
    )
    // Resume reaches the row with the engine's next state change: samples read before it still say
    // "Paused" (a full run under load read one).
    const resumed = seen.findIndex(({ row }) => !row.startsWith('Paused'))
    expect(seen[resumed]!.row).toMatch(/^Resuming…/)
    for (const { row, summary } of seen.slice(resumed, told)) {
      expect(row).not.toMatch(/\/s|left/)
      expect(summary).not.toMatch(/left/)
    }
    for (const { row, summary } of seen) expect(`${row} | ${summary}`).not.toMatch(/ 0 B\/s| h /)
    // One upload: the summary's time left is the row's, to the second.
    for (let i = 0; i < 10; i++, await sleep(300)) {
      const { row, summary } = await read()
      const [rowLeft, summaryLeft] = [row, summary].map((text) => /\d+ (s|min) left/.exec(text)?.[0])
      if (rowLeft) expect(summaryLeft).toBe(rowLeft)
    }
    link.setUploadRate(Infinity)
    await expectStored(page, name, testBytes(96 * MiB, 353))
    expect(page.errors).toEqual([])
    await page.close()
  }, 240_000)

  it(`${BROWSER_LABELS[browser]}: a reload at a third of a 40 MiB upload lists the parts storage holds; Resume carries on from them, byte-exact`, async () => {
    link.setUploadRate(SLOW)
    const page = await openPage(session)
    const name = `reloaded-${browser}.bin`
    const path = await files.write(name, 40 * MiB, 354)
    await page.setInputFiles(INPUT, [path])
    const atReload = await until(
      () => rowNamed(page, name),
      (row) => (row?.percent ?? 0) >= 33,
      `${name} at 33%`,
    )

    /** The upload the page's resume record names (written when the upload was created). */
    const recordedUploadId = async () => (await resumeRecords(page))[0]!.uploadId
    /** The parts storage accepted as the page's resume record has them: each with its reply. */
    const recordedParts = async () => (await resumeRecords(page))[0]!.parts.map((part) => part.partNumber)
    /**
     * Reloads and reads the unfinished upload's listing, with the parts the page had recorded just
     * before the reload and what storage holds whole once it has settled after the listing. The
     * list says what the page knows storage accepted: never less than it had recorded, never more
     * than storage holds. Storage may hold more: a part whose body was all in but whose reply had
     * not reached the page (a full run under load: 4 whole, 1 recorded), or bytes that had left the
     * closed page (the kernel's buffers, the relay) and land while it lists (3 listed, 4 whole once
     * settled). Resume asks storage again, so it sends none of those.
     */
    const reloadAndList = async () => {
      const uploadId = await recordedUploadId()
      const before = await recordedParts()
      await page.reload()
      await page.waitForFunction(() => document.querySelector('[data-testid=unfinished-row]') !== null)
      const text = await page.evaluate(() =>
        (document.querySelector('[data-testid=unfinished-row]') as HTMLElement).innerText.replace(/\s+/g, ' '),
      )
      const settled = await settledWholeParts(uploadId)
      const listed = Number(/(\d+) of 8 parts stored/.exec(text)?.[1])
      expect(
        listed,
        `${text}; recorded before the reload [${before}], whole once settled [${settled}]`,
      ).toBeGreaterThanOrEqual(before.length)
      expect(
        listed,
        `${text}; recorded before the reload [${before}], whole once settled [${settled}]`,
      ).toBeLessThanOrEqual(settled.length)
      return { listed, text, before, settled, uploadId }
    }
    // The four parts in flight were each about two-thirds sent: none is whole, and the list says so
    // in bytes, not as lost work.
    const third = await reloadAndList()
    console.log(
      `${browser} reload at ${atReload!.percent}%: "${third.text}"; parts recorded before [${third.before}], whole once settled [${third.settled}]`,
    )
    if (third.listed === 0)
      expect(third.text).toContain('no part was whole when the page closed: Resume sends it from the start')

    await page.pickWithDialog(() => page.click(`button[aria-label="Resume upload of ${name}"]`), [path])
    // Once storage has accepted four parts and the page has their replies, reload again: now parts
    // are listed.
    await until(recordedParts, (parts) => parts.length >= 4, `${name}: four parts recorded`, 120_000)
    const later = await reloadAndList()
    console.log(
      `${browser} reload with four parts recorded: "${later.text}"; recorded before [${later.before}], whole once settled [${later.settled}]`,
    )
    expect(later.listed).toBeGreaterThanOrEqual(4)
    expect(later.text).toContain(`${later.listed * 5} MiB of 40 MiB: Resume sends the rest`)

    link.setUploadRate(Infinity)
    // What the relay still held of the closed page's parts lands at full speed now; storage is read
    // once it has settled. Resume sends none of the parts stored whole then, and each other part
    // at most once (one that turned whole after this read, as a full run saw in Firefox, is
    // rightly not sent: Resume lists the parts again when clicked).
    const atResume = await settledWholeParts(later.uploadId)
    await page.evaluate(() => performance.clearResourceTimings())
    await page.pickWithDialog(() => page.click(`button[aria-label="Resume upload of ${name}"]`), [path])
    await expectStored(page, name, testBytes(40 * MiB, 354))
    const sent = await page.evaluate(() =>
      performance
        .getEntriesByType('resource')
        .map((entry) => new URL(entry.name).searchParams.get('partNumber'))
        .filter((part) => part !== null)
        .map(Number),
    )
    console.log(`${browser} Resume: whole before [${atResume}], sent [${sent}]`)
    expect(
      sent.filter((part) => atResume.includes(part)),
      'parts stored whole before Resume, sent again',
    ).toEqual([])
    expect(new Set(sent).size, `parts sent [${sent}]`).toBe(sent.length)
    expect(sent.length).toBeGreaterThan(0)
    await page.close()
  }, 240_000)
})

/** {@link wholeParts}, read again every 700 ms until two reads agree: parts whose bodies had all left the page may still land. */
async function settledWholeParts(uploadId: string): Promise<number[]> {
  let whole = await wholeParts(uploadId)
  for (let previous = -1; previous !== whole.length; await sleep(700))
    [previous, whole] = [whole.length, await wholeParts(uploadId)]
  return whole
}

/** Parts of a multipart upload the embedded store holds whole (s3rver writes `{n}.md5` once a part's body is all in). */
async function wholeParts(uploadId: string): Promise<number[]> {
  const folder = join(store.embedded!.directory, store.embedded!.bucket, '._S3rver_uploads', uploadId)
  const names = await readdir(folder)
  return names
    .filter((name) => /^\d+\.md5$/.test(name))
    .map((name) => Number(name.split('.')[0]))
    .sort((x, y) => x - y)
}
