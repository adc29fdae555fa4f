// Issue 13 in real Chromium: a page uploads, is closed after some parts, and a new page of the same
// site carries the upload on from its IndexedDB record, sending only the parts storage lacks
// (counted by the logging proxy in front of Ceph RGW). The file comes back either from a kept
// file handle (an origin-private file's FileSystemFileHandle, stored in the record) or picked
// again. A different file with the same name and size does not resume; a record whose upload was
// aborted on storage starts afresh.
import { AbortMultipartUploadCommand, ListPartsCommand } from '@aws-sdk/client-s3'
import type { BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { BROWSER_LABELS, BROWSERS, launchBrowser, type TestPage } from '../dev/browsers.ts'
import { type FaultProxy, partNumberOf, startFaultProxy } from '../dev/fault-proxy.ts'
import { type ChromiumSession, launchChromium } from '../dev/launch-chromium.ts'
import { readObject, sdkClient, sha256 } from '../dev/s3-client.ts'
import { type ServedHandler, serveHandler } from '../dev/serve-handler.ts'
import { storeConfig } from '../dev/stores.ts'
import { createUploadHandler } from '../server/index.ts'
import { bundleEngine } from './helpers/engine-bundle.ts'
import { type StaticServer, startStaticServer } from './helpers/static-server.ts'

const MiB = 1024 * 1024
const PARTS = 6
const SIZE = (PARTS - 1) * 5 * MiB + 777
const rgw = inject('rgw')
const admin = sdkClient(rgw)
let site: StaticServer
let proxy: FaultProxy
let served: ServedHandler
let chromium: ChromiumSession

beforeAll(async () => {
  const bundle = await bundleEngine()
  site = await startStaticServer({
    '/': { type: 'text/html; charset=utf-8', body: PAGE_HTML },
    '/engine.js': { type: 'text/javascript; charset=utf-8', body: bundle.code },
  })
  proxy = await startFaultProxy({ target: rgw.endpoint, kind: 'storage' })
  served = await serveHandler(
    createUploadHandler(
      storeConfig(
        { ...rgw, endpoint: proxy.url },
        { resumable: true, allowedOrigins: [site.origin], logger: { error() {}, warn() {} } },
      ),
    ),
  )
  chromium = await launchChromium()
})

afterAll(async () => {
  await chromium?.close()
  await served?.close()
  await proxy?.stop()
  await site?.close()
  admin.destroy()
})

const PAGE_HTML = `<!doctype html><meta charset="utf-8"><title>updraft resume</title><link rel="icon" href="data:,">
<script type="module">import * as updraft from '/engine.js'; window.updraft = updraft</script>`

type Engine = typeof import('../engine/index.ts')
/** What the page's code can reach: the engine, and the test's values. */
declare const window: Window & { updraft: Engine; left?: Promise<unknown> }

async function openPage(context: BrowserContext): Promise<Page> {
  const page = await context.newPage()
  await page.goto(`${site.origin}/`)
  await page.waitForFunction(() => 'updraft' in window)
  return page
}

/** The test file's bytes, made in the page: seed picks the content, the same in Node (below). */
const bytesOf = (seed: number) => Uint8Array.from({ length: SIZE }, (_, i) => (i * 31 + seed) % 251)

const partPutsSince = (from: number, key: string) =>
  proxy.log
    .slice(from)
    .filter((entry) => entry.step === 'PUT ?partNumber' && decodeURIComponent(entry.url).includes(key))

/**
 * Starts an upload in `page` of a file written to the origin-private file system (its handle
 * goes into the record), and waits until the record holds `parts` parts. The page is then closed
 * by the caller, mid-upload.
 */
async function startAndWait(page: Page | TestPage, name: string, seed: number, parts: number) {
  await (page as TestPage).evaluate(
    async ({ api, name, seed, size }) => {
      const root = await navigator.storage.getDirectory()
      const handle = await root.getFileHandle(name, { create: true })
      const writable = await handle.createWritable()
      await writable.write(Uint8Array.from({ length: size }, (_, i) => (i * 31 + seed) % 251))
      await writable.close()
      const { upload, resumeUploads } = window.updraft
      window.left = upload(await handle.getFile(), {
        api,
        strategy: 'presigned',
        resume: resumeUploads(),
        fileHandle: handle,
        partConcurrency: 2,
      }).catch(() => {})
    },
    { api: served.api, name, seed, size: SIZE },
  )
  await expect
    .poll(
      () =>
        (page as TestPage).evaluate(async () => (await window.updraft.resumeUploads().list())[0]?.parts.length ?? 0),
      { timeout: 30_000, interval: 20 },
    )
    .toBeGreaterThanOrEqual(parts)
  return (page as TestPage).evaluate(async () => {
    const [record] = await window.updraft.resumeUploads().list()
    return { key: record!.key, uploadId: record!.uploadId, bucket: record!.bucket }
  })
}

/** Parts storage holds for an upload: the truth a resume must respect. */
/**
 * After a page closed mid-upload: storage's part list once every part request has closed (a part
 * whose body had wholly left may still be answered) and a moment more for a part that reached
 * storage whole as its page went. A fixed 300 ms lost that race on a loaded machine.
 */
async function storedPartsOnceSettled(record: { bucket: string; key: string; uploadId: string }) {
  await expect
    .poll(
      () =>
        proxy.log.filter((entry) => entry.step === 'PUT ?partNumber').every((entry) => entry.closedAt !== undefined),
      { timeout: 30_000 },
    )
    .toBe(true)
  await new Promise((resolve) => setTimeout(resolve, 300))
  return storedParts(record)
}

async function storedParts(record: { bucket: string; key: string; uploadId: string }) {
  const listed = await admin.send(
    new ListPartsCommand({ Bucket: record.bucket, Key: record.key, UploadId: record.uploadId }),
  )
  return new Set((listed.Parts ?? []).map((part) => part.PartNumber!))
}

describe('resume after the page closes, in Chromium, on RGW', () => {
  it('the kept file handle: a new page lists the upload and carries it on; only the missing parts go out', async () => {
    const context = await chromium.browser.newContext()
    const first = await openPage(context)
    const record = await startAndWait(first, 'kept.bin', 1, 2)
    await first.close()
    const onStorage = await storedPartsOnceSettled(record)

    const before = proxy.log.length
    const second = await openPage(context)
    const outcome = await second.evaluate(async (api) => {
      const resume = window.updraft.resumeUploads()
      const [unfinished] = await resume.list()
      // Read through the kept handle: no picking again.
      const file = await unfinished!.handle!.getFile()
      const result = await window.updraft.upload(file, { api, strategy: 'presigned', resume })
      return { name: unfinished!.name, listed: unfinished!.parts.length, result, left: (await resume.list()).length }
    }, served.api)
    expect(outcome.name).toBe('kept.bin')
    expect(outcome.result.key).toBe(record.key)
    expect(outcome.left).toBe(0)
    expect(sha256(await readObject(admin, rgw.bucket, record.key))).toBe(sha256(bytesOf(1)))
    const resent = partPutsSince(before, record.key)
    const missing = Array.from({ length: PARTS }, (_, i) => i + 1).filter((n) => !onStorage.has(n))
    expect(resent.map(partNumberOf).sort((a, b) => a - b)).toEqual(missing)
    const resentFinished = resent
      .filter((put) => onStorage.has(partNumberOf(put)))
      .reduce((sum, put) => sum + put.bytes, 0)
    expect(resentFinished).toBe(0)
    console.log(
      `handle kept: ${onStorage.size} of ${PARTS} parts on storage at close; ${resent.length} sent after reopening; ${resentFinished} bytes of finished parts re-sent`,
    )
    await context.close()
  })

  it('picked again: the same file resumes; a different file with the same name and size does not', async () => {
    const context = await chromium.browser.newContext()
    const first = await openPage(context)
    const record = await startAndWait(first, 'picked.bin', 2, 2)
    await first.close()
    const onStorage = await storedPartsOnceSettled(record)

    // A different file: same name, size and lastModified (a File made in the page), other bytes.
    const second = await openPage(context)
    // What a file input gives again for the same file: name, type, size, lastModified (and bytes).
    const { lastModified, type } = await second.evaluate(async () => {
      const [unfinished] = await window.updraft.resumeUploads().list()
      return { lastModified: unfinished!.lastModified, type: (await unfinished!.handle!.getFile()).type }
    })
    const beforeOther = proxy.log.length
    const other = await second.evaluate(
      async ({ api, size, lastModified, type }) => {
        const bytes = Uint8Array.from({ length: size }, (_, i) => (i * 31 + 3) % 251)
        const file = new File([bytes], 'picked.bin', { lastModified, type })
        return window.updraft.upload(file, { api, strategy: 'presigned', resume: window.updraft.resumeUploads() })
      },
      { api: served.api, size: SIZE, lastModified, type },
    )
    expect(other.key).not.toBe(record.key)
    expect(partPutsSince(beforeOther, other.key)).toHaveLength(PARTS)
    expect(sha256(await readObject(admin, rgw.bucket, other.key))).toBe(sha256(bytesOf(3)))

    // The same file picked again (the same bytes, name and lastModified): it resumes.
    const beforeSame = proxy.log.length
    const same = await second.evaluate(
      async ({ api, size, lastModified, type }) => {
        const bytes = Uint8Array.from({ length: size }, (_, i) => (i * 31 + 2) % 251)
        const file = new File([bytes], 'picked.bin', { lastModified, type })
        const resume = window.updraft.resumeUploads()
        const result = await window.updraft.upload(file, { api, strategy: 'presigned', resume })
        return { result, left: (await resume.list()).length }
      },
      { api: served.api, size: SIZE, lastModified, type },
    )
    expect(same.result.key).toBe(record.key)
    expect(same.left).toBe(0)
    expect(sha256(await readObject(admin, rgw.bucket, record.key))).toBe(sha256(bytesOf(2)))
    const resent = partPutsSince(beforeSame, record.key)
    expect(resent.every((put) => !onStorage.has(partNumberOf(put)))).toBe(true)
    expect(resent).toHaveLength(PARTS - onStorage.size)
    await context.close()
  })

  it('a record whose upload was aborted on storage starts afresh, and the record is dropped', async () => {
    const context = await chromium.browser.newContext()
    const first = await openPage(context)
    const record = await startAndWait(first, 'aborted.bin', 4, 1)
    await first.close()
    await admin.send(
      new AbortMultipartUploadCommand({ Bucket: record.bucket, Key: record.key, UploadId: record.uploadId }),
    )

    const before = proxy.log.length
    const second = await openPage(context)
    const outcome = await second.evaluate(async (api) => {
      const resume = window.updraft.resumeUploads()
      const [stale] = await resume.list()
      const result = await window.updraft.upload(await stale!.handle!.getFile(), { api, strategy: 'presigned', resume })
      return { result, left: (await resume.list()).length }
    }, served.api)
    expect(outcome.result.key).not.toBe(record.key)
    expect(outcome.left).toBe(0)
    expect(partPutsSince(before, outcome.result.key)).toHaveLength(PARTS)
    expect(sha256(await readObject(admin, rgw.bucket, outcome.result.key))).toBe(sha256(bytesOf(4)))
    await context.close()
  })
})

describe.each(BROWSERS)('resume after a reload, in %s, on RGW', (browser) => {
  it(`${BROWSER_LABELS[browser]}: the page reloads mid-upload; its IndexedDB record and kept file handle carry the upload on, only the missing parts sent, byte-exact`, async () => {
    const session = await launchBrowser(browser)
    try {
      const page = await session.newPage()
      await page.goto(`${site.origin}/`)
      await page.waitForFunction(() => 'updraft' in window)
      const record = await startAndWait(page, `reloaded-${browser}.bin`, 5, 2)
      const atReload = proxy.log.length
      await page.reload() // the upload dies with the page, as a closed tab's does
      await page.waitForFunction(() => 'updraft' in window)
      await new Promise((resolve) => setTimeout(resolve, 300))
      // Going away is not cancelling: nothing aborted the upload on storage (Firefox fires abort on
      // the XHRs a reload cuts; the engine must not read that as the user's abort).
      expect(proxy.log.slice(atReload).map((entry) => entry.step)).not.toContain('DELETE ?uploadId')
      const onStorage = await storedPartsOnceSettled(record)
      expect(onStorage.size).toBeGreaterThanOrEqual(1)
      const before = proxy.log.length
      const outcome = await page.evaluate(async (api) => {
        const resume = window.updraft.resumeUploads()
        const [unfinished] = await resume.list()
        const result = await window.updraft.upload(await unfinished!.handle!.getFile(), {
          api,
          strategy: 'presigned',
          resume,
        })
        return { result, left: (await resume.list()).length }
      }, served.api)
      expect(outcome.result.key).toBe(record.key)
      expect(outcome.left).toBe(0)
      const resent = partPutsSince(before, record.key)
      expect(resent.every((put) => !onStorage.has(partNumberOf(put)))).toBe(true)
      expect(resent).toHaveLength(PARTS - onStorage.size)
      expect(sha256(await readObject(admin, rgw.bucket, record.key))).toBe(sha256(bytesOf(5)))
      expect(page.errors).toEqual([])
    } finally {
      await session.close()
    }
  })
})
