// Errors that hide their cause (issue 35), end to end in Chromium through the demo app (`npm start`:
// the components, the hook, the Fastify plugin) against a real s3rver: the sentence the page shows,
// the requests it sends (a final error is not retried), and the one line the server logs.
import type { Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { type RunningApp, startApp } from '../demo/app.ts'
import { type ChromiumSession, launchChromium } from '../dev/launch-chromium.ts'
import { type S3rverInstance, startS3rver } from '../dev/s3rver.ts'
import { storeConfig } from '../dev/stores.ts'
import type { UploadHandlerConfig } from '../server/config.ts'
import {
  filePayload,
  MiB,
  openDemo,
  pickFiles,
  rowsOf,
  settle,
  stateOf,
  type TestFiles,
  testFiles,
} from './helpers/demo-page.ts'

const MISCONFIGURED = "This site's upload service is misconfigured — its owner has to fix it; retrying won't help"

let chromium: ChromiumSession
let files: TestFiles
let store: S3rverInstance
const running: RunningApp[] = []

beforeAll(async () => {
  ;[chromium, files, store] = await Promise.all([launchChromium(), testFiles(), startS3rver()])
})
afterEach(async () => {
  await Promise.all(running.splice(0).map((app) => app.close()))
})
afterAll(async () => {
  await chromium?.close()
  await files?.remove()
  await store?.stop()
})

/** The demo app on `config`, its log lines kept (pino's JSON, one per line). */
async function app(
  config: UploadHandlerConfig,
): Promise<{ started: RunningApp; lines: Array<{ level: number; msg: string }> }> {
  const lines: Array<{ level: number; msg: string }> = []
  const stream = { write: (line: string) => void lines.push(JSON.parse(line)) }
  const started = await startApp({ port: 0, host: '127.0.0.1', config, logger: { level: 'warn', stream } })
  running.push(started)
  return { started, lines }
}

/** The page, with every request it sends recorded as "METHOD url". */
async function open(url: string): Promise<{ page: Page; requests: string[] }> {
  const page = await chromium.newPage()
  const requests: string[] = []
  page.on('request', (request) => void requests.push(`${request.method()} ${request.url()}`))
  await openDemo(page, url)
  return { page, requests }
}

describe('a configuration fault is final, and says the same whatever the file', () => {
  it('a wrong S3_UPLOAD_SECRET: 1 MiB and 40 MiB read the same sentence with no Retry, each asked once, storage never touched; the server logs one line naming S3_UPLOAD_SECRET and doctor', async () => {
    const { started, lines } = await app(storeConfig(store, { secretAccessKey: 'not-the-secret' }))
    const { page, requests } = await open(started.url)

    await pickFiles(page, [await files.write('small.bin', MiB, 1)])
    const small = await settle(rowsOf(page, 'small.bin'))
    await pickFiles(page, [await files.write('large.bin', 40 * MiB, 2)])
    const large = await settle(rowsOf(page, 'large.bin'))

    for (const row of [small, large]) {
      expect(row).toMatchObject({ status: 'error', state: 'refused' })
      expect(row.text).toContain(MISCONFIGURED)
      // Nothing of the settings reaches the page: no key, no secret, no store address.
      expect(row.text).not.toMatch(/S3_UPLOAD|not-the-secret|S3RVER|127\.0\.0\.1/)
    }
    expect(await page.getByRole('button', { name: /^Retry upload/ }).count()).toBe(0)
    // One upload request per file (a retried one would be a second), and no byte to storage.
    const asked = requests.filter((request) => request.startsWith(`POST ${started.url}${started.prefix}`))
    expect(asked).toHaveLength(2)
    expect(requests.filter((request) => request.includes(store.endpoint))).toEqual([])

    const errors = lines.filter((line) => line.level >= 50)
    expect(errors).toHaveLength(1)
    expect(errors[0]!.msg).toMatch(
      /^updraft: storage at http:\/\/127\.0\.0\.1:\d+ refused the server's signature \(SignatureDoesNotMatch\): S3_UPLOAD_SECRET is not the secret of S3_UPLOAD_KEY/,
    )
    expect(errors[0]!.msg).toContain('Run npx updraft-s3 doctor')
    expect(errors[0]!.msg).not.toContain('not-the-secret')
    expect(JSON.stringify(errors[0])).not.toContain('stack')
    await page.close()
  })

  it('an unknown bucket: the same sentence, and the log says to check the spelling of S3_UPLOAD_BUCKET', async () => {
    const { started, lines } = await app(storeConfig(store, { bucket: 'uplaods' }))
    const { page } = await open(started.url)
    await pickFiles(page, [await files.write('a.bin', MiB, 3)])
    const row = await settle(rowsOf(page, 'a.bin'))
    expect(row).toMatchObject({ status: 'error', state: 'refused' })
    expect(row.text).toContain(MISCONFIGURED)
    expect(lines.filter((line) => line.level >= 50).map((line) => line.msg)).toEqual([
      expect.stringContaining('check the spelling of S3_UPLOAD_BUCKET'),
    ])
    await page.close()
  })
})

describe('what cannot change offers no Retry', () => {
  it('a refused type (a PDF whose first bytes are not a PDF): final, no Retry, and the server logs the refusal', async () => {
    const { started, lines } = await app(storeConfig(store))
    const { page } = await open(started.url)
    const fake = { ...filePayload('report.pdf', 'application/pdf', 2000, 4), buffer: Buffer.alloc(2000, 0x41) }
    await pickFiles(page, [fake])
    const row = await settle(rowsOf(page, 'report.pdf'))
    expect(row).toMatchObject({ status: 'error', state: 'refused' })
    expect(row.text).toContain('its first bytes do not match its declared type, application/pdf')
    expect(row.text).not.toMatch(/ a application/)
    expect(
      await rowsOf(page, 'report.pdf')
        .getByRole('button', { name: /^Retry/ })
        .count(),
    ).toBe(0)
    expect(lines.filter((line) => line.level === 40).map((line) => line.msg)).toContainEqual(
      expect.stringMatching(
        /^updraft: \/complete refused the upload at next-s3-uploads\/.+\/report\.pdf \(422\) and deleted it: its first bytes do not match its declared type, application\/pdf$/,
      ),
    )
    await page.close()
  })
})

describe('a refused connection is named, not taken for the browser being offline', () => {
  it('the upload API gone (its port closed): "Can\'t reach the upload API at …", while retrying and once the retries are spent', async () => {
    const { started } = await app(storeConfig(store))
    const { page } = await open(started.url)
    // The page is loaded; now nothing listens where its upload API was.
    await started.app.close()
    await pickFiles(page, [await files.write('b.bin', MiB, 5)])
    const row = rowsOf(page, 'b.bin')
    const origin = new URL(started.url).origin
    await row.getByText(`Can't reach the upload API at ${origin} — retrying`).waitFor()
    // Past the retries the engine waits and tries again by itself; online, the row still names the host.
    await row.and(page.locator('[data-status=waiting-for-network]')).waitFor({ timeout: 120_000 })
    expect(await stateOf(row)).toBe('retrying')
    expect(await row.innerText()).toContain(`Can't reach the upload API at ${origin} — retrying`)
    expect(await row.innerText()).not.toMatch(/waiting for the network/i)
    await page.close()
  })
})
