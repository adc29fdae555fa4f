// `npm run screenshots`: pictures of the running demo (demo/app.ts on its embedded s3rver, behind a
// 3 MiB/s uplink) mid-upload with every kind of row — done, refused, cancelled, paused, uploading —
// at 1280×800 and 390×844, in Chromium (playwright-core) and Firefox ESR (puppeteer-core over
// WebDriver BiDi), into docs/screenshots/. docs/demo.png (the README's first picture) is the
// Chromium 1280×800 one. `-- --only chromium` or `-- --only firefox` takes one browser.
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { chromium } from 'playwright-core'
import puppeteer from 'puppeteer-core'
import { startApp } from '../demo/app.ts'
import { FIREFOX_PATH } from '../dev/browsers.ts'
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../dev/launch-chromium.ts'
import { startLinkSwitch } from '../dev/link-switch.ts'
import { testBytes, testBytesOf } from '../dev/s3-client.ts'
import { gradientPng } from '../tests/helpers/png.ts'

const MiB = 1024 * 1024
const OUT = fileURLToPath(new URL('../docs/screenshots/', import.meta.url))
const README_PICTURE = fileURLToPath(new URL('../docs/demo.png', import.meta.url))
const SIZES = [
  { name: 'desktop', width: 1280, height: 800, mobile: false },
  { name: 'phone', width: 390, height: 844, mobile: true },
] as const
const INPUT = '.updraft-zone input[type="file"]:not([webkitdirectory])'

/** What the script needs of a page, the same in both drivers. */
interface Shot {
  setFiles(paths: string[]): Promise<void>
  click(selector: string): Promise<void>
  evaluate<R>(fn: () => R): Promise<R>
  screenshot(path: string): Promise<void>
  close(): Promise<void>
}

async function main() {
  const { values } = parseArgs({ options: { only: { type: 'string' } } })
  const browsers = values.only ? [values.only] : ['chromium', 'firefox']
  const folder = await mkdtemp(join(tmpdir(), 'updraft-screenshots-'))
  const store = await startApp({ port: 0, host: '127.0.0.1', logger: { level: 'error' } })
  const link = await startLinkSwitch(store.embedded!.endpoint, { uploadBytesPerSecond: 3 * MiB })
  const { credentials, bucket, region } = store.embedded!
  const app = await startApp({
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
      maxFileSize: 64 * MiB,
      allowedTypes: ['image/*', 'video/*', 'application/pdf', 'application/zip'],
    },
  })
  const write = async (name: string, bytes: Uint8Array) => {
    const path = join(folder, name)
    await writeFile(path, bytes)
    return path
  }
  const files = {
    photo: await write('holiday-photo.png', gradientPng(320, 240)),
    notes: await write('notes.txt', testBytes(6 * 1024, 80)),
    backup: await write('site-backup.zip', testBytesOf('application/zip', 24 * MiB, 81)),
    footage: await write('raw-footage.mp4', testBytes(80 * MiB, 82)),
    talk: await write('conference-talk.mp4', testBytesOf('video/mp4', 48 * MiB, 83)),
    scan: await write('scanned-contract.pdf', testBytesOf('application/pdf', 20 * MiB, 84)),
  }
  await mkdir(OUT, { recursive: true })
  try {
    for (const browser of browsers) {
      for (const size of SIZES) {
        const shot = browser === 'firefox' ? await firefoxPage(app.url, size) : await chromiumPage(app.url, size)
        const path = join(OUT, `demo-${browser}-${size.width}x${size.height}.png`)
        await stage(shot, files)
        await shot.screenshot(path)
        if (browser === 'chromium' && size.name === 'desktop') await copyFile(path, README_PICTURE)
        console.log(`wrote ${path}`)
        // Nothing left running into the next page's link.
        await shot.evaluate(() => {
          for (const button of document.querySelectorAll<HTMLButtonElement>('button[aria-label^="Cancel upload"]'))
            button.click()
        })
        await shot.close()
      }
    }
  } finally {
    await app.close()
    await link.close()
    await store.close()
    await rm(folder, { recursive: true, force: true })
  }
}

/** Every kind of row: done with a thumbnail, refused twice, cancelled, paused, and one uploading with its speed. */
async function stage(shot: Shot, files: Record<string, string>) {
  const until = async (test: () => boolean, what: string) => {
    for (let i = 0; i < 1200; i++) {
      if (await shot.evaluate(test)) return
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    throw new Error(`the demo page never showed ${what}`)
  }
  await shot.setFiles([files.photo!, files.notes!])
  await until(
    () => !!document.querySelector('img.updraft-thumbnail') && !!document.querySelector('[data-state=done]'),
    'the photo done',
  )
  await shot.setFiles([files.backup!])
  await until(
    () =>
      Number(
        document.querySelector('[data-testid=upload-row]:last-child [role=progressbar]')?.getAttribute('aria-valuenow'),
      ) >= 15,
    'the backup at 15%',
  )
  await shot.click('button[aria-label="Cancel upload of site-backup.zip"]')
  await shot.setFiles([files.footage!, files.scan!, files.talk!])
  await until(
    () =>
      Number(
        document
          .querySelector('[data-testid=upload-row]:nth-child(5) [role=progressbar]')
          ?.getAttribute('aria-valuenow'),
      ) >= 10,
    'the scan at 10%',
  )
  await shot.click('button[aria-label="Pause upload of scanned-contract.pdf"]')
  await until(
    () => /\d+ s left/.test(document.querySelector('[data-testid=upload-row]:last-child')?.textContent ?? ''),
    'a time left on the talk',
  )
}

async function chromiumPage(url: string, size: (typeof SIZES)[number]): Promise<Shot> {
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS })
  const context = await browser.newContext({
    viewport: { width: size.width, height: size.height },
    ...(size.mobile && { isMobile: true, hasTouch: true, deviceScaleFactor: 2 }),
  })
  const page = await context.newPage()
  await page.emulateMedia({ colorScheme: 'light', reducedMotion: 'reduce' })
  await page.goto(url)
  await page.getByText('Asking the server…').waitFor({ state: 'detached' })
  return {
    setFiles: (paths) => page.setInputFiles(INPUT, paths),
    click: (selector) => page.click(selector),
    evaluate: (fn) => page.evaluate(fn),
    async screenshot(path) {
      await page.evaluate(() => window.scrollTo(0, 0))
      await page.screenshot({ path, fullPage: !size.mobile, animations: 'disabled', caret: 'hide' })
    },
    close: () => browser.close(),
  }
}

async function firefoxPage(url: string, size: (typeof SIZES)[number]): Promise<Shot> {
  const browser = await puppeteer.launch({ browser: 'firefox', executablePath: FIREFOX_PATH, headless: true })
  const page = await browser.newPage()
  await page.setViewport({
    width: size.width,
    height: size.height,
    ...(size.mobile && { isMobile: true, hasTouch: true, deviceScaleFactor: 2 }),
  })
  // Headless Firefox is light already; Puppeteer cannot emulate media features over BiDi.
  await page.goto(url)
  await page.waitForFunction(() => !document.body.textContent?.includes('Asking the server…'))
  return {
    async setFiles(paths) {
      const input = await page.$(INPUT)
      await (input as unknown as { uploadFile(...paths: string[]): Promise<void> }).uploadFile(...paths)
    },
    click: (selector) => page.click(selector),
    evaluate: (fn) => page.evaluate(fn),
    async screenshot(path) {
      await page.evaluate(() => window.scrollTo(0, 0))
      await page.screenshot({ path: path as `${string}.png`, fullPage: !size.mobile })
    },
    close: () => browser.close(),
  }
}

await main()
