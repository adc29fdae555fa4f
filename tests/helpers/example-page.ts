import type { Page } from 'playwright-core'
import { expect } from 'vitest'
import type { ChromiumSession } from '../../dev/launch-chromium.ts'
import { readObject, sdkClient, sha256, testBytes } from '../../dev/s3-client.ts'
import type { TestStore } from '../../dev/stores.ts'
import { FILE_INPUT } from './file-input.ts'

const MiB = 1024 * 1024

/**
 * The examples' pages (examples/fastify, examples/nextjs) share one contract: the hook's hidden
 * file input (the page's one `<input type="file" multiple>`) and one `<li data-status data-key>`
 * per upload. Picks a small file (one PUT) and a 6 MiB one (presigned multipart, over the 5 MiB
 * threshold), waits until both settle, and reads each object back from `store`, byte for byte.
 */
export async function uploadThroughPage(chromium: ChromiumSession, url: string, store: TestStore): Promise<void> {
  const page = await chromium.newPage()
  try {
    const pageErrors: string[] = []
    page.on('pageerror', (error) => pageErrors.push(error.message))
    await page.goto(url)
    const files = [
      { name: 'small.bin', bytes: testBytes(64 * 1024, 7) },
      { name: 'large.bin', bytes: testBytes(6 * MiB + 123, 8) },
    ]
    await page
      .locator(FILE_INPUT)
      .setInputFiles(
        files.map(({ name, bytes }) => ({ name, mimeType: 'application/octet-stream', buffer: Buffer.from(bytes) })),
      )
    const rows = await settledRows(page, files.length)
    expect(pageErrors).toEqual([])
    expect(rows.map((row) => [row.text.split(':')[0], row.status])).toEqual(files.map(({ name }) => [name, 'done']))

    const client = sdkClient(store)
    try {
      for (const [i, { bytes }] of files.entries()) {
        const stored = await readObject(client, store.bucket, rows[i]!.key!)
        expect(sha256(stored)).toBe(sha256(bytes))
      }
    } finally {
      client.destroy()
    }
  } finally {
    await page.close()
  }
}

interface Row {
  status: string
  key: string | null
  text: string
}

/** Waits (up to 60 s) until `count` rows have ended: done, error or aborted. */
async function settledRows(page: Page, count: number): Promise<Row[]> {
  await page.waitForFunction(
    (n) => {
      const ended = [...document.querySelectorAll('li[data-status]')].filter((li) =>
        ['done', 'error', 'aborted'].includes(li.getAttribute('data-status')!),
      )
      return ended.length >= n
    },
    count,
    { timeout: 60_000 },
  )
  return page.$$eval('li[data-status]', (items) =>
    items.map((li) => ({
      status: li.getAttribute('data-status')!,
      key: li.getAttribute('data-key'),
      text: li.textContent ?? '',
    })),
  )
}
