// The demo page in real Chromium (issue 4, "Tests in real Chromium"; issue 15), served by the
// very app `npm start` runs (demo/app.ts `startApp`): first on its embedded s3rver, as a newcomer
// gets it, then on Ceph RGW for what s3rver lacks (ListMultipartUploads after an abort, STS).
// The components' own behaviour (every state and control, axe, screenshots): ui-browser.test.ts.
import { randomUUID } from 'node:crypto'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ListMultipartUploadsCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3'
import type { Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest'
import { type AppOptions, EMBEDDED_TOKEN_REASON, type RunningApp, startApp } from '../demo/app.ts'
import { type ChromiumSession, launchChromium } from '../dev/launch-chromium.ts'
import { readObject, type StoreAccess, sdkClient, sha256, testBytes } from '../dev/s3-client.ts'
import { type RgwStore, storeConfig } from '../dev/stores.ts'
import type { UploadHandlerConfig } from '../server/config.ts'
import { formatBytes } from '../src/format.ts'
import {
  filePayload,
  keyFromObjectUrl,
  MiB,
  openDemo,
  percentOf,
  pickFiles,
  rowsOf,
  type SettledRow,
  settle,
  type TestFiles,
  testFiles,
  throttleUploads,
} from './helpers/demo-page.ts'
import { gradientPng } from './helpers/png.ts'

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
async function app(config?: AppOptions['config'], options: Partial<AppOptions> = {}): Promise<RunningApp> {
  const started = await startApp({ port: 0, host: '127.0.0.1', config, logger: { level: 'error' }, ...options })
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
  return entries
    .filter((entry) => entry.isFile() && !entry.name.endsWith('_S3rver_cors.xml'))
    .map((entry) => entry.name)
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
  it('serves the built page and /info, which says token mode is off and how to try it, as information rather than an error', async () => {
    const started = await app()
    const info = await fetch(`${started.url}/api/s3-upload/info`).then((reply) => reply.json())
    expect(info).toEqual({
      token: false,
      tokenUnavailableReason: EMBEDDED_TOKEN_REASON,
      presigned: true,
      store: expect.stringMatching(/^embedded s3rver at http:\/\/127\.0\.0\.1:\d+ · bucket uploads$/),
      maxBatchFiles: 100,
    })
    const limited = await app({ maxFileSize: 30 * MiB, allowedTypes: ['image/*', 'application/pdf'] })
    expect(await fetch(`${limited.url}/api/s3-upload/info`).then((reply) => reply.json())).toMatchObject({
      maxFileSize: 30 * MiB,
      allowedTypes: ['image/*', 'application/pdf'],
    })
    // The static handler never reaches outside dist/demo.
    for (const url of ['/..%2fpackage.json', '/%2e%2e/package.json', '/.vite/manifest.json', '/assets/']) {
      expect((await started.app.inject({ method: 'GET', url })).statusCode, url).toBe(404)
    }

    const page = await newPage(started.url)
    const token = page.getByRole('radio', { name: 'Temporary credentials (token)' })
    expect(await token.isDisabled()).toBe(true)
    expect(await page.getByRole('radio', { name: 'Presigned URLs' }).isChecked()).toBe(true)
    const note = page.locator('#mode-token-note')
    expect(await note.innerText()).toBe(`Not on this server. ${EMBEDDED_TOKEN_REASON}.`)
    // A first visit where nothing is wrong: the note is in the page's muted colour, as the other mode's, not in red.
    const colour = (selector: string) => page.locator(selector).evaluate((element) => getComputedStyle(element).color)
    expect(await colour('#mode-token-note')).toBe(await colour('#mode-presigned-note'))
    // The sidebar's "Accepts" line as laid out: no line holds only punctuation (it left a lone ")").
    const accepts = await page
      .locator('.facts dd')
      .last()
      .evaluate((dd) => {
        const lines = new Map<number, string>()
        const walker = document.createTreeWalker(dd, NodeFilter.SHOW_TEXT)
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
          for (let i = 0; i < node.textContent!.length; i++) {
            const range = document.createRange()
            range.setStart(node, i)
            range.setEnd(node, i + 1)
            const top = Math.round(range.getClientRects()[0]?.top ?? -1)
            lines.set(top, (lines.get(top) ?? '') + node.textContent![i])
          }
        }
        return [...lines.values()].map((line) => line.trim()).filter(Boolean)
      })
    expect(accepts.join(' ')).toContain('UPDRAFT_ALLOWED_TYPES')
    expect(accepts.filter((line) => !/\w/.test(line))).toEqual([])
  })

  it('uploads two files picked through the page button, one small and one 12 MiB multipart, byte-exact', async () => {
    const started = await app()
    const store = embeddedStore(started)
    const page = await newPage(started.url)
    // From disk: a 12 MiB buffer through the DevTools protocol holds the page's main thread ~11 s
    // here, near pickFiles' 30 s on a loaded machine.
    const small = {
      path: await files.write('small note.txt', 200 * 1024 + 3, 41),
      buffer: testBytes(200 * 1024 + 3, 41),
    }
    const large = { path: await files.write('large.bin', 12 * MiB, 42), buffer: testBytes(12 * MiB, 42) }

    await pickFiles(page, [small.path, large.path])

    const client = sdkClient(store)
    const smallRow = await settle(rowsOf(page, 'small note.txt'))
    const largeRow = await settle(rowsOf(page, 'large.bin'))
    await expectStored(smallRow, client, store.bucket, small.buffer)
    await expectStored(largeRow, client, store.bucket, large.buffer)
    expect(await page.getByText('2 done', { exact: true }).count()).toBe(1)
    expect(await page.getByRole('progressbar', { name: 'All uploads' }).getAttribute('aria-valuenow')).toBe('100')
    client.destroy()
  })

  it('shows what the server recorded on each row; bytes that are not the declared image fail with the server’s reason', async () => {
    const started = await app()
    const store = embeddedStore(started)
    const page = await newPage(started.url)
    const photo = { name: 'photo.png', mimeType: 'image/png', buffer: gradientPng(40, 30) }
    const disguised = {
      name: 'disguised.png',
      mimeType: 'image/png',
      buffer: Buffer.from('<!doctype html><script>alert(document.cookie)</script>'),
    }

    await pickFiles(page, [photo, disguised])

    const client = sdkClient(store)
    const good = await settle(rowsOf(page, 'photo.png'))
    const key = await expectStored(good, client, store.bucket, photo.buffer)
    // The hook's entry carries the server's answer (serverData); the demo page words it.
    expect(good.text).toContain(
      `Server checked and recorded it as upload #1 (${formatBytes(photo.buffer.length)}, image/png)`,
    )
    expect([...started.completed.values()]).toEqual([
      { id: 1, key, size: photo.buffer.length, contentType: 'image/png' },
    ])

    const bad = await settle(rowsOf(page, 'disguised.png'))
    expect(bad.status).toBe('error')
    expect(bad.text).toContain(
      'The uploaded object was refused and deleted: its first bytes do not match its declared type, image/png',
    )
    // Deleted from storage (s3rver's files on disk: the photo's only), never recorded.
    const names = await storedFiles(started)
    expect(names.some((name) => name.startsWith('photo.png'))).toBe(true)
    expect(names.filter((name) => name.startsWith('disguised.png'))).toEqual([])
    expect(started.completed.size).toBe(1)
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
    await page.dispatchEvent('.updraft-zone', 'dragenter', { dataTransfer })
    await page.getByText('Drop to upload').waitFor()
    await page.dispatchEvent('.updraft-zone', 'dragover', { dataTransfer })
    await page.dispatchEvent('.updraft-zone', 'drop', { dataTransfer })

    const client = sdkClient(store)
    await expectStored(await settle(rowsOf(page, 'dropped.bin')), client, store.bucket, bytes)
    await page.getByText('Drop to upload').waitFor({ state: 'detached' })
    client.destroy()
  })

  it('cancelling a multipart upload mid-way is clean: "Cancelled", no 500, no part left on disk, one readable log line', async () => {
    const lines: string[] = []
    const errors: string[] = []
    const started = await app(undefined, {
      log: (line) => lines.push(line),
      logger: { level: 'warn', stream: { write: (line: string) => errors.push(line) } },
    })
    const page = await newPage(started.url)
    const aborts: number[] = []
    page.on('response', (response) => {
      if (new URL(response.url()).pathname === '/api/s3-upload/abort') aborts.push(response.status())
    })
    await throttleUploads(page, 4 * MiB)
    await pickFiles(page, [await files.write('big.bin', 32 * MiB, 45)])

    const row = rowsOf(page, 'big.bin')
    await expect.poll(() => percentOf(row), { timeout: 30_000, interval: 100 }).toBeGreaterThanOrEqual(10)
    await page.getByRole('button', { name: 'Cancel upload of big.bin' }).click()

    const cancelled = await settle(row)
    expect(cancelled.state).toBe('cancelled')
    expect(cancelled.text).toContain('Cancelled')
    expect(cancelled.percent).toBeLessThan(100)
    await expect.poll(() => aborts, { timeout: 10_000 }).toEqual([200])
    await expect.poll(() => storedFiles(started), { timeout: 10_000 }).toEqual([])
    expect(lines.filter((line) => line.startsWith('Aborted'))).toEqual([
      expect.stringMatching(
        /^Aborted the multipart upload of next-s3-uploads\/[0-9a-f-]{36}\/big\.bin: removed \d+ parts? from the embedded store$/,
      ),
    ])
    expect(errors).toEqual([])
  })

  it("refuses a file the upload API's limits forbid in the page, before any request, saying why (allowedTypes: ['image/*'])", async () => {
    const started = await app({ allowedTypes: ['image/*'] })
    const page = await newPage(started.url)
    const requests: string[] = []
    page.on('request', (request) => void requests.push(new URL(request.url()).pathname))

    await pickFiles(page, [filePayload('notes.txt', 'text/plain', 1024, 46)])

    const refused = await settle(rowsOf(page, 'notes.txt'))
    expect(refused.state).toBe('refused')
    expect(refused.text).toContain("Text files aren't accepted here — only images")
    expect(requests).toEqual([])
    expect(await storedFiles(started)).toEqual([])
  })

  it('keeps object links working across a restart on a fixed store port (npm start uses 4568)', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'updraft-demo-restart-'))
    const storePort = await freePort()
    try {
      const first = await app(undefined, { dataDir, storePort })
      const page = await newPage(first.url)
      const payload = filePayload('kept.bin', 'application/octet-stream', 70 * 1024, 56)
      await pickFiles(page, [payload])
      const row = await settle(rowsOf(page, 'kept.bin'))
      expect(row.state).toBe('done')
      expect(new URL(row.url!).port).toBe(String(storePort))
      await page.close()
      await first.close()
      running.splice(running.indexOf(first), 1)

      await app(undefined, { dataDir, storePort })
      const reply = await fetch(row.url!)
      expect(reply.status).toBe(200)
      expect(sha256(await reply.arrayBuffer())).toBe(sha256(payload.buffer))
    } finally {
      await Promise.all(running.splice(0).map((started) => started.close()))
      await rm(dataDir, { recursive: true, force: true })
    }
  })
})

/** A port nothing listens on right now. */
async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

describe('demo page against Ceph RGW', () => {
  it('cancelling a multipart upload mid-way says "Cancelled" and leaves no multipart upload', async () => {
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
    await page.getByRole('button', { name: 'Cancel upload of archive.bin' }).click()

    const aborted = await settle(row)
    expect(aborted.status).toBe('aborted')
    expect(aborted.text).toContain('Cancelled')
    await expect.poll(pending, { timeout: 15_000, interval: 250 }).toEqual([])
    const listing = await client.send(new ListObjectsV2Command({ Bucket: rgw.bucket, Prefix: prefix }))
    expect(listing.KeyCount ?? 0).toBe(0)
    client.destroy()
  })

  it('token mode (STS AssumeRole) uploads a small and a multipart file end to end, byte-exact, under keys that keep Unicode names', async () => {
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
    const small = filePayload('résumé 📄 final.pdf', 'application/pdf', 70 * 1024, 52)
    // The large file from disk (see the first upload test); the small one a payload, for its PDF start.
    const large = { path: await files.write('写真 token-large.bin', 12 * MiB, 53), buffer: testBytes(12 * MiB, 53) }
    await pickFiles(page, [small])
    await pickFiles(page, [large.path])

    const client = sdkClient(rgw)
    const rows = [await settle(rowsOf(page, 'résumé 📄 final.pdf')), await settle(rowsOf(page, '写真 token-large.bin'))]
    const keys = [
      await expectStored(rows[0]!, client, rgw.bucket, small.buffer),
      await expectStored(rows[1]!, client, rgw.bucket, large.buffer),
    ]
    // The token's policy names each key exactly (server/sts.ts), Unicode and all: RGW allowed them.
    expect(keys.map((key) => key.split('/').pop())).toEqual(['résumé-final.pdf', '写真-token-large.bin'])
    expect(strategies).toEqual(['token', 'token'])
    // Token uploads end at /complete too: the server checked each one and the rows say what it recorded.
    for (const row of rows) expect(row.text).toMatch(/Server checked and recorded it as upload #[12] \(/)
    expect([...started.completed.values()].map((record) => record.key).sort()).toEqual([...keys].sort())
    client.destroy()
  })
})
