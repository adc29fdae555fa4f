// The demo page in real Chromium (issue 4, "Tests in real Chromium"), served by the very app
// `npm start` runs (demo/app.ts `startApp`): first on its embedded s3rver, as a newcomer
// gets it, then on Ceph RGW for what s3rver lacks (ListMultipartUploads after an abort, STS).
import { randomUUID } from 'node:crypto'
import { mkdir, readdir, stat, writeFile } from 'node:fs/promises'
import { ListMultipartUploadsCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3'
import type { Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest'
import { startApp, type AppOptions, type RunningApp } from '../demo/app.ts'
import type { UploadHandlerConfig } from '../server/config.ts'
import { launchChromium, type ChromiumSession } from './helpers/browser.ts'
import {
  filePayload,
  keyFromObjectUrl,
  MiB,
  openDemo,
  percentOf,
  pickFiles,
  rowsOf,
  settle,
  testFiles,
  throttleUploads,
  type SettledRow,
  type TestFiles,
} from './helpers/demo-page.ts'
import { readObject, sdkClient, sha256, testBytes, type StoreAccess } from './helpers/s3-client.ts'
import { type RgwStore, storeConfig } from './helpers/stores.ts'

const ARTIFACTS = new URL('./artifacts/', import.meta.url)
const README_SCREENSHOT = new URL('../docs/demo.png', import.meta.url)

let chromium: ChromiumSession
let files: TestFiles
/** Apps a test started; closed after it, whatever happened. */
const running: RunningApp[] = []

beforeAll(async () => {
  chromium = await launchChromium()
  files = await testFiles()
})

afterEach(async () => {
  await Promise.all(running.splice(0).map((app) => app.close()))
})

afterAll(async () => {
  await chromium?.close()
  await files?.remove()
})

/** The `npm start` app on a free loopback port; its embedded s3rver unless `config` names a store. */
async function app(config?: AppOptions['config']): Promise<RunningApp> {
  // Errors only: the expected warning after an abort on s3rver stays out of the test output.
  const started = await startApp({ port: 0, host: '127.0.0.1', config, logger: { level: 'error' } })
  running.push(started)
  return started
}

async function newPage(url: string): Promise<Page> {
  const page = await chromium.newPage()
  await openDemo(page, url)
  return page
}

/** How the test reads the embedded store back: with the AWS SDK, independently of the app. */
function embeddedStore(started: RunningApp): StoreAccess & { bucket: string; directory: string } {
  const { embedded } = started
  if (!embedded) throw new Error('the app was expected to start its embedded s3rver')
  const { endpoint, region, credentials, bucket, directory } = embedded
  return { endpoint, region, credentials, bucket, directory }
}

/** What s3rver keeps on disk besides its bucket settings: objects, their metadata, multipart parts. */
async function storedFiles(started: RunningApp): Promise<string[]> {
  const entries = await readdir(embeddedStore(started).directory, { recursive: true, withFileTypes: true })
  return entries.filter((entry) => entry.isFile() && !entry.name.endsWith('_S3rver_cors.xml')).map((entry) => entry.name)
}

const rgwConfig = (rgw: RgwStore): UploadHandlerConfig => storeConfig(rgw)

/** The row ended `done` at 100%, and the object its link names holds exactly `expected`. */
async function expectStored(row: SettledRow, client: S3Client, bucket: string, expected: Uint8Array): Promise<string> {
  expect(row.status, row.text).toBe('done')
  expect(row.percent).toBe(100)
  expect(row.url).toBeDefined()
  const key = keyFromObjectUrl(row.url!, bucket)
  expect(sha256(await readObject(client, bucket, key))).toBe(sha256(expected))
  return key
}

describe('demo page on the embedded s3rver (npm start with no settings)', () => {
  it('serves the built page and /info, which says token mode is unavailable and why', async () => {
    const started = await app()
    const info = await fetch(`${started.url}/api/s3-upload/info`).then((reply) => reply.json())
    expect(info).toEqual({
      token: false,
      tokenUnavailableReason: 'The embedded local S3 has no STS; set S3_UPLOAD_* and S3_UPLOAD_STS_* to use token mode',
      presigned: true,
      store: expect.stringMatching(/^embedded s3rver at http:\/\/127\.0\.0\.1:\d+ · bucket uploads$/),
    })
    // The static handler never reaches outside dist/demo.
    for (const url of ['/..%2fpackage.json', '/%2e%2e/package.json', '/.vite/manifest.json', '/assets/']) {
      expect((await started.app.inject({ method: 'GET', url })).statusCode, url).toBe(404)
    }

    const page = await newPage(started.url)
    const token = page.getByRole('radio', { name: 'Temporary credentials (token)' })
    expect(await token.isDisabled()).toBe(true)
    expect(await page.getByRole('radio', { name: 'Presigned URLs' }).isChecked()).toBe(true)
    await page.getByText('Unavailable: The embedded local S3 has no STS').waitFor()
  })

  it('uploads two files picked through the page button, one small and one 12 MiB multipart, byte-exact', async () => {
    const started = await app()
    const store = embeddedStore(started)
    const page = await newPage(started.url)
    const small = filePayload('small note.txt', 'text/plain', 200 * 1024 + 3, 41)
    const large = filePayload('large.bin', 'application/octet-stream', 12 * MiB, 42)

    await pickFiles(page, [small, large])

    const client = sdkClient(store)
    const smallRow = await settle(rowsOf(page, 'small note.txt'))
    const largeRow = await settle(rowsOf(page, 'large.bin'))
    await expectStored(smallRow, client, store.bucket, small.buffer)
    await expectStored(largeRow, client, store.bucket, large.buffer)
    expect(largeRow.text).toContain('12 MiB of 12 MiB sent')
    expect(await page.getByText('0 running · 2 done · 0 failed or aborted').count()).toBe(1)
    client.destroy()
  })

  it('uploads the same file picked twice in a row twice, as two objects', async () => {
    const started = await app()
    const store = embeddedStore(started)
    const page = await newPage(started.url)
    const same = filePayload('again.bin', 'application/octet-stream', 64 * 1024, 43)

    await pickFiles(page, [same])
    const first = await settle(rowsOf(page, 'again.bin').nth(0))
    await pickFiles(page, [same])
    const second = await settle(rowsOf(page, 'again.bin').nth(1))

    expect(await rowsOf(page, 'again.bin').count()).toBe(2)
    const client = sdkClient(store)
    const keys = [
      await expectStored(first, client, store.bucket, same.buffer),
      await expectStored(second, client, store.bucket, same.buffer),
    ]
    expect(new Set(keys).size).toBe(2)
    client.destroy()
  })

  it('uploads a file dropped on the page, byte-exact', async () => {
    const started = await app()
    const store = embeddedStore(started)
    const page = await newPage(started.url)
    const bytes = testBytes(300 * 1024 + 1, 44)

    // A DataTransfer holding a File, built in the page: what a real drop from the desktop carries.
    const dataTransfer = await page.evaluateHandle(
      ({ base64, name }) => {
        const binary = atob(base64)
        const data = Uint8Array.from(binary, (char) => char.charCodeAt(0))
        const transfer = new DataTransfer()
        transfer.items.add(new File([data], name, { type: 'application/octet-stream' }))
        return transfer
      },
      { base64: Buffer.from(bytes).toString('base64'), name: 'dropped.bin' },
    )
    await page.dispatchEvent('main', 'dragenter', { dataTransfer })
    await page.getByText('Drop to upload').waitFor()
    await page.dispatchEvent('main', 'dragover', { dataTransfer })
    await page.dispatchEvent('main', 'drop', { dataTransfer })

    const client = sdkClient(store)
    await expectStored(await settle(rowsOf(page, 'dropped.bin')), client, store.bucket, bytes)
    await page.getByText('Drop to upload').waitFor({ state: 'detached' })
    client.destroy()
  })

  it('shows "Upload aborted" when a large upload is aborted mid-way (s3rver itself cannot abort)', async () => {
    const started = await app()
    const page = await newPage(started.url)
    await throttleUploads(page, 4 * MiB)
    await pickFiles(page, [await files.write('big.bin', 32 * MiB, 45)])

    const row = rowsOf(page, 'big.bin')
    await expect.poll(() => percentOf(row), { timeout: 30_000, interval: 100 }).toBeGreaterThanOrEqual(10)
    await page.getByRole('button', { name: 'Abort upload of big.bin' }).click()

    const aborted = await settle(row)
    expect(aborted.status).toBe('aborted')
    expect(aborted.text).toContain('Upload aborted')
    expect(aborted.percent).toBeLessThan(100)
  })

  it("shows the endpoint's refusal in the row (allowedTypes: ['image/*'], a text file)", async () => {
    const started = await app({ allowedTypes: ['image/*'] })
    const page = await newPage(started.url)

    await pickFiles(page, [filePayload('notes.txt', 'text/plain', 1024, 46)])

    const refused = await settle(rowsOf(page, 'notes.txt'))
    expect(refused.status).toBe('error')
    expect(refused.text).toContain("filetype 'text/plain' is not allowed; allowed: image/*")
    expect(await storedFiles(started)).toEqual([]) // refused before any URL was signed
  })

  it('looks right mid-upload: a screenshot with rows done, failed, aborted and uploading', async () => {
    const started = await app({ allowedTypes: ['image/*', 'video/*', 'application/zip'] })
    const page = await chromium.newPage()
    await page.setViewportSize({ width: 880, height: 1000 })
    await openDemo(page, started.url)
    await throttleUploads(page, 3 * MiB)

    await pickFiles(page, [await files.write('holiday-photo.jpg', Math.round(2.4 * MiB), 47), await files.write('notes.txt', 6 * 1024, 48)])
    expect((await settle(rowsOf(page, 'holiday-photo.jpg'))).status).toBe('done')
    expect((await settle(rowsOf(page, 'notes.txt'))).status).toBe('error')

    await pickFiles(page, [await files.write('site-backup.zip', 24 * MiB, 49)])
    const backup = rowsOf(page, 'site-backup.zip')
    await expect.poll(() => percentOf(backup), { timeout: 30_000, interval: 100 }).toBeGreaterThanOrEqual(20)
    await page.getByRole('button', { name: 'Abort upload of site-backup.zip' }).click()
    expect((await settle(backup)).status).toBe('aborted')

    await pickFiles(page, [await files.write('conference-talk.mp4', 48 * MiB, 50)])
    const talk = rowsOf(page, 'conference-talk.mp4')
    await expect.poll(() => percentOf(talk), { timeout: 30_000, interval: 100 }).toBeGreaterThanOrEqual(40)

    const statuses = await page.getByTestId('upload-row').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-status')))
    expect(statuses).toEqual(['done', 'error', 'aborted', 'uploading'])
    const screenshot = await page.screenshot({ fullPage: true })
    await mkdir(ARTIFACTS, { recursive: true })
    await writeFile(new URL('demo-mid-upload.png', ARTIFACTS), screenshot)
    // `UPDRAFT_README_SCREENSHOT=1 npx vitest run tests/demo-browser.test.ts -t screenshot` refreshes the README's.
    if (process.env.UPDRAFT_README_SCREENSHOT) await writeFile(README_SCREENSHOT, screenshot)
    expect((await stat(new URL('demo-mid-upload.png', ARTIFACTS))).size).toBeGreaterThan(10_000)

    await page.getByRole('button', { name: 'Abort upload of conference-talk.mp4' }).click()
    expect((await settle(talk)).status).toBe('aborted')
  })
})

describe('demo page against Ceph RGW', () => {
  it('aborting a multipart upload mid-way says "Upload aborted" and leaves no multipart upload', async () => {
    const rgw = inject('rgw')
    const prefix = `demo-browser/abort-${randomUUID()}`
    const started = await app({ ...rgwConfig(rgw), key: (_request, filename) => `${prefix}/${filename}` })
    const client = sdkClient(rgw)
    const pending = async () =>
      (await client.send(new ListMultipartUploadsCommand({ Bucket: rgw.bucket, Prefix: prefix }))).Uploads ?? []

    const page = await newPage(started.url)
    await throttleUploads(page, 4 * MiB)
    await pickFiles(page, [await files.write('archive.bin', 32 * MiB, 51)])

    const row = rowsOf(page, 'archive.bin')
    await expect.poll(() => percentOf(row), { timeout: 30_000, interval: 100 }).toBeGreaterThanOrEqual(10)
    expect(await pending()).toHaveLength(1) // caught mid-way: the multipart upload exists
    await page.getByRole('button', { name: 'Abort upload of archive.bin' }).click()

    const aborted = await settle(row)
    expect(aborted.status).toBe('aborted')
    expect(aborted.text).toContain('Upload aborted')
    await expect.poll(pending, { timeout: 15_000, interval: 250 }).toEqual([])
    const listing = await client.send(new ListObjectsV2Command({ Bucket: rgw.bucket, Prefix: prefix }))
    expect(listing.KeyCount ?? 0).toBe(0)
    client.destroy()
  })

  it('token mode (STS AssumeRole) uploads a small and a multipart file end to end, byte-exact', async () => {
    const rgw = inject('rgw')
    const started = await app({
      ...rgwConfig(rgw),
      sts: { mode: 'assume-role', roleArn: rgw.roleArn, endpoint: rgw.endpoint },
    })
    const info = await fetch(`${started.url}/api/s3-upload/info`).then((reply) => reply.json())
    expect(info).toMatchObject({ token: true, presigned: true })
    expect(info).not.toHaveProperty('tokenUnavailableReason')

    const page = await newPage(started.url)
    const strategies: unknown[] = []
    page.on('request', (request) => {
      if (new URL(request.url()).pathname === '/api/s3-upload') strategies.push(request.postDataJSON()?.strategy)
    })
    await page.getByRole('radio', { name: 'Temporary credentials (token)' }).check()
    const small = filePayload('token-small.bin', 'application/octet-stream', 70 * 1024, 52)
    const large = filePayload('token-large.bin', 'application/octet-stream', 12 * MiB, 53)
    await pickFiles(page, [small, large])

    const client = sdkClient(rgw)
    await expectStored(await settle(rowsOf(page, 'token-small.bin')), client, rgw.bucket, small.buffer)
    await expectStored(await settle(rowsOf(page, 'token-large.bin')), client, rgw.bucket, large.buffer)
    expect(strategies).toEqual(['token', 'token'])
    client.destroy()
  })
})
