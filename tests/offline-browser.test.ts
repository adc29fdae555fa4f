// Issue 13 in real Chromium, on the `npm start` page: the network drops for 10 s mid-upload
// (DevTools network emulation, which also fires the page's offline and online events). The row
// says it waits for the network, never "Failed to fetch", and the upload completes by itself once
// the network is back. Prints the time from `online` to the first part request going out again.
import type { S3Client } from '@aws-sdk/client-s3'
import type { CDPSession, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startApp, type RunningApp } from '../demo/app.ts'
import { launchChromium, type ChromiumSession } from './helpers/browser.ts'
import { keyFromObjectUrl, MiB, openDemo, percentOf, pickFiles, rowsOf, settle, stateOf, testFiles, type TestFiles } from './helpers/demo-page.ts'
import { readObject, sdkClient, sha256, testBytes } from './helpers/s3-client.ts'

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

/** The page's network as DevTools emulates it: offline or not, upload bytes per second (-1: no cap). */
const emulate = (cdp: CDPSession, offline: boolean, uploadThroughput = -1) =>
  cdp.send('Network.emulateNetworkConditions', { offline, latency: 0, downloadThroughput: -1, uploadThroughput })

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe('offline mid-upload', () => {
  it('the row waits for the network through 10 s offline, then completes by itself, byte-exact', async () => {
    const page: Page = await chromium.newPage()
    await openDemo(page, app.url)
    const cdp = await page.context().newCDPSession(page)
    await cdp.send('Network.enable')
    // When each part request leaves the page, in this process's clock.
    const partRequests: number[] = []
    cdp.on('Network.requestWillBeSent', ({ request }) => {
      if (request.method === 'PUT' && request.url.includes('partNumber=')) partRequests.push(performance.now())
    })
    // Slow enough (3 MiB/s) to be caught mid-way.
    await emulate(cdp, false, 3 * MiB)
    const size = 24 * MiB
    await pickFiles(page, [await files.write('offline.bin', size, 90)])
    const row = rowsOf(page, 'offline.bin')
    await expect.poll(() => percentOf(row), { timeout: 30_000, interval: 50 }).toBeGreaterThanOrEqual(10)

    await emulate(cdp, true, 3 * MiB)
    await expect.poll(() => stateOf(row), { timeout: 10_000, interval: 20 }).toBe('offline')
    expect(await row.locator('.updraft-state').innerText()).toBe('Waiting for the network')
    const percentOffline = await percentOf(row)
    await sleep(10_000)
    // Ten seconds later (past the retry budget's first steps): still waiting, not failed.
    expect(await row.getAttribute('data-status')).toBe('waiting-for-network')
    expect(await row.innerText()).not.toMatch(/Failed|Connection lost/)
    expect(await percentOf(row)).toBeGreaterThanOrEqual(percentOffline)

    const sentBefore = partRequests.length
    const online = performance.now()
    await emulate(cdp, false)
    await expect.poll(() => partRequests.filter((at) => at >= online).length, { timeout: 20_000, interval: 10 }).toBeGreaterThan(0)
    const firstPart = partRequests.slice(sentBefore).find((at) => at >= online)!
    console.log(`online → first part request: ${(firstPart - online).toFixed(0)} ms`)

    const done = await settle(row, 60_000)
    expect(done.state, done.text).toBe('done')
    expect(done.percent).toBe(100)
    const key = keyFromObjectUrl(done.url!, app.embedded!.bucket)
    expect(sha256(await readObject(client, app.embedded!.bucket, key))).toBe(sha256(testBytes(size, 90)))
    await page.close()
  })
})
