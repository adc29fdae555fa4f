// Issue 13 on the `npm start` page in real Chromium: Pause and Resume per row; the network drops
// for 10 s mid-upload (DevTools emulation, which also fires the page's offline and online events)
// and the row waits for it, never "Failed to fetch", then completes by itself (printing the time
// from `online` to the first part request going out again); a reload mid-upload lists the
// unfinished upload, and Resume (the file picked again) carries it on with only the missing parts;
// Discard aborts one on storage and takes it off the list.
import { readFile } from 'node:fs/promises'
import type { S3Client } from '@aws-sdk/client-s3'
import type { CDPSession, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type RunningApp, startApp } from '../demo/app.ts'
import { type ChromiumSession, launchChromium } from '../dev/launch-chromium.ts'
import { readObject, sdkClient, sha256 } from '../dev/s3-client.ts'
import {
  keyFromObjectUrl,
  MiB,
  openDemo,
  percentOf,
  pickFiles,
  resumeRecords,
  rowsOf,
  settle,
  stateOf,
  type TestFiles,
  testFiles,
} from './helpers/demo-page.ts'

let chromium: ChromiumSession
let files: TestFiles
let app: RunningApp
let client: S3Client

beforeAll(async () => {
  chromium = await launchChromium()
  files = await testFiles()
  app = await startApp({ port: 0, host: '127.0.0.1', logger: { level: 'error' } })
  const { endpoint, region, credentials } = app.embedded!
  client = sdkClient({ endpoint, region, credentials })
})

afterAll(async () => {
  client?.destroy()
  await chromium?.close()
  await app?.close()
  await files?.remove()
})

/** The page's network as DevTools emulates it: upload bytes per second (-1: no cap), offline or not. */
const throttle = (cdp: CDPSession, uploadThroughput: number, offline = false) =>
  cdp.send('Network.emulateNetworkConditions', { offline, latency: 0, downloadThroughput: -1, uploadThroughput })

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function openWithNetwork(page: Page) {
  await openDemo(page, app.url)
  const cdp = await page.context().newCDPSession(page)
  await cdp.send('Network.enable')
  const parts: number[] = []
  cdp.on('Network.requestWillBeSent', ({ request }) => {
    const partNumber = new URL(request.url).searchParams.get('partNumber')
    if (request.method === 'PUT' && partNumber) parts.push(Number(partNumber))
  })
  return { cdp, parts }
}

/** The most parts any upload record in the page's IndexedDB holds (the page has opened the database by then). */
const recordedParts = async (page: Page) =>
  Math.max(0, ...(await resumeRecords(page)).map((record) => record.parts.length))

async function expectStored(page: Page, name: string, expected: Buffer) {
  const row = await settle(rowsOf(page, name).last(), 60_000)
  expect(row.state, row.text).toBe('done')
  const key = keyFromObjectUrl(row.url!, app.embedded!.bucket)
  expect(sha256(await readObject(client, app.embedded!.bucket, key))).toBe(sha256(expected))
}

describe('the demo page: pause, resume, and unfinished uploads after a reload', () => {
  it('Pause holds a row (no part moves), Resume carries it on to the end', async () => {
    const page = await chromium.newPage()
    const { cdp, parts } = await openWithNetwork(page)
    await throttle(cdp, 4 * MiB)
    const path = await files.write('paused-row.bin', 16 * MiB, 51)
    await pickFiles(page, [path])
    const row = rowsOf(page, 'paused-row.bin')
    await expect.poll(() => percentOf(row), { timeout: 30_000, interval: 50 }).toBeGreaterThanOrEqual(10)
    await page.getByRole('button', { name: 'Pause upload of paused-row.bin' }).click()
    await expect.poll(() => stateOf(row), { timeout: 10_000, interval: 20 }).toBe('paused')
    const sent = parts.length
    const held = await percentOf(row)
    await sleep(1500)
    expect(parts.length).toBe(sent)
    expect(await percentOf(row)).toBe(held)
    await throttle(cdp, -1)
    await page.getByRole('button', { name: 'Resume upload of paused-row.bin' }).click()
    await expectStored(page, 'paused-row.bin', await readFile(path))
    await page.close()
  })

  it('offline for 10 s mid-upload: the row waits for the network, then completes by itself, byte-exact', async () => {
    const page = await chromium.newPage()
    const { cdp } = await openWithNetwork(page)
    // When each part request leaves the page, in this process's clock.
    const partRequests: number[] = []
    cdp.on('Network.requestWillBeSent', ({ request }) => {
      if (request.method === 'PUT' && request.url.includes('partNumber=')) partRequests.push(performance.now())
    })
    await throttle(cdp, 3 * MiB)
    const path = await files.write('offline.bin', 24 * MiB, 90)
    await pickFiles(page, [path])
    const row = rowsOf(page, 'offline.bin')
    await expect.poll(() => percentOf(row), { timeout: 30_000, interval: 50 }).toBeGreaterThanOrEqual(10)

    await throttle(cdp, 3 * MiB, true)
    await expect.poll(() => stateOf(row), { timeout: 10_000, interval: 20 }).toBe('offline')
    expect(await row.locator('.updraft-state').innerText()).toBe('Waiting for the network')
    const percentOffline = await percentOf(row)
    await sleep(10_000)
    // Ten seconds later (past the retry budget's first steps): still waiting, not failed.
    expect(await row.getAttribute('data-status')).toBe('waiting-for-network')
    expect(await row.innerText()).not.toMatch(/Failed|Connection lost/)
    expect(await percentOf(row)).toBeGreaterThanOrEqual(percentOffline)

    const online = performance.now()
    await throttle(cdp, -1)
    await expect
      .poll(() => partRequests.filter((at) => at >= online).length, { timeout: 20_000, interval: 10 })
      .toBeGreaterThan(0)
    const firstPart = partRequests.find((at) => at >= online)!
    console.log(`online → first part request: ${(firstPart - online).toFixed(0)} ms`)
    await expectStored(page, 'offline.bin', await readFile(path))
    await page.close()
  })

  it('after a reload the unfinished upload is listed; Resume with the file picked again sends only the missing parts', async () => {
    const page = await chromium.newPage()
    const first = await openWithNetwork(page)
    await throttle(first.cdp, 4 * MiB)
    const size = 24 * MiB
    const path = await files.write('reloaded.bin', size, 52)
    await pickFiles(page, [path])
    await expect.poll(() => recordedParts(page), { timeout: 30_000, interval: 50 }).toBeGreaterThanOrEqual(2)
    // The person reloads mid-upload (the leave-page warning is for people, not for this test).
    page.on('dialog', (dialog) => void dialog.accept())
    await page.reload()
    await page.getByText('Asking the server…').waitFor({ state: 'detached' })
    const unfinished = page.getByTestId('unfinished-row').filter({ hasText: 'reloaded.bin' })
    await unfinished.waitFor()
    const stored = Number(/(\d+) of (\d+) parts stored/.exec(await unfinished.innerText())![1])
    const total = Math.ceil(size / (5 * MiB))
    expect(stored).toBeGreaterThan(0)

    const cdp = await page.context().newCDPSession(page)
    await cdp.send('Network.enable')
    await throttle(cdp, -1)
    const after: number[] = []
    cdp.on('Network.requestWillBeSent', ({ request }) => {
      const partNumber = new URL(request.url).searchParams.get('partNumber')
      if (request.method === 'PUT' && partNumber) after.push(Number(partNumber))
    })
    const [chooser] = await Promise.all([
      page.waitForEvent('filechooser'),
      page.getByRole('button', { name: 'Resume upload of reloaded.bin' }).click(),
    ])
    await chooser.setFiles(path)
    await expectStored(page, 'reloaded.bin', await readFile(path))
    // Only parts storage lacked went out, each once (storage may hold more than the record saw).
    expect(new Set(after).size).toBe(after.length)
    expect(after.length).toBeLessThanOrEqual(total - stored)
    console.log(`demo reload: ${stored} of ${total} parts on record, ${after.length} sent after Resume`)
    await expect.poll(() => page.getByTestId('unfinished-row').count()).toBe(0)
    await page.close()
  })

  it('Discard aborts the unfinished upload on storage and takes it off the list, for good', async () => {
    const page = await chromium.newPage()
    const { cdp } = await openWithNetwork(page)
    await throttle(cdp, 4 * MiB)
    await pickFiles(page, [await files.write('discarded.bin', 16 * MiB, 53)])
    await expect.poll(() => recordedParts(page), { timeout: 30_000, interval: 50 }).toBeGreaterThanOrEqual(1)
    page.on('dialog', (dialog) => void dialog.accept())
    await page.reload()
    const abort = page.waitForResponse((response) => new URL(response.url()).pathname.endsWith('/abort'))
    await page.getByRole('button', { name: 'Discard upload of discarded.bin' }).click()
    expect((await abort).status()).toBe(200)
    await expect.poll(() => page.getByTestId('unfinished-row').count()).toBe(0)
    await page.reload()
    await page.getByText('Asking the server…').waitFor({ state: 'detached' })
    await sleep(500)
    await expect.poll(() => page.getByTestId('unfinished-row').count()).toBe(0)
    await page.close()
  })
})
