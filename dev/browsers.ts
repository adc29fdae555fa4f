// One page interface over the two browsers the suite drives: Debian's Chromium through
// playwright-core, Debian's Firefox ESR through puppeteer-core over WebDriver BiDi (Playwright
// cannot drive a stock Firefox: it needs its own patched build). Tests written against TestPage
// run in both with `describe.each(BROWSERS)`. Only what both drivers do the same way is here.
import { access, constants, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Page as PlaywrightPage } from 'playwright-core'
import puppeteer, { type Browser as PuppeteerBrowser, type Page as PuppeteerPage } from 'puppeteer-core'
import { launchChromium } from './launch-chromium.ts'

export type BrowserName = 'chromium' | 'firefox'
/** Every browser the suite runs its user-facing browser tests in. */
export const BROWSERS: readonly BrowserName[] = ['chromium', 'firefox']
export const BROWSER_LABELS: Record<BrowserName, string> = { chromium: 'Chromium', firefox: 'Firefox ESR' }

/** Debian's `firefox-esr` package (153 ESR here). */
export const FIREFOX_PATH = '/usr/bin/firefox-esr'

export interface FileToPick {
  name: string
  mimeType: string
  buffer: Buffer
}

/** A page in either browser: what the cross-browser tests do with it. */
export interface TestPage {
  browser: BrowserName
  goto(url: string): Promise<void>
  /** Reloads as a person who confirms leaving: a leave-page prompt (uploads running) is accepted. */
  reload(): Promise<void>
  /** Runs `fn` in the page (its source is serialised: it must not refer to anything outside itself). */
  evaluate<R, A = undefined>(fn: (arg: A) => R | Promise<R>, arg?: A): Promise<Awaited<R>>
  /** Waits until `fn(arg)` is truthy in the page. */
  waitForFunction<A = undefined>(fn: (arg: A) => unknown, arg?: A, timeoutMs?: number): Promise<void>
  /** Sets the files of the `<input type=file>` matching `selector`, as a pick would (a change event follows). */
  /** Files made in memory, or paths on disk (the same file picked twice is then the same to the page: name, bytes and lastModified). */
  setInputFiles(selector: string, files: FileToPick[] | string[]): Promise<void>
  /** Runs `open` (a click, a key press) and answers the file dialog it opens with `files`. */
  pickWithDialog(open: () => Promise<void>, files: FileToPick[] | string[]): Promise<void>
  /** Runs `open` and waits for the file dialog it opens, then dismisses it with nothing picked. */
  dismissDialog(open: () => Promise<void>): Promise<void>
  click(selector: string): Promise<void>
  /**
   * A double click at page coordinates (CSS pixels, the viewport's): two clicks, the second's
   * `detail` 2, each dispatched after the page has handled the one before (a button the first
   * click put there takes the second).
   */
  doubleClickAt(x: number, y: number): Promise<void>
  /** A key as a person presses it: `Tab`, `Shift+Tab`, `Enter`, `Space`, `Escape`. */
  press(key: string): Promise<void>
  /** Errors the page logged or threw since it opened. */
  errors: string[]
  /**
   * Another tab in this page's context, blank: the same site storage (IndexedDB, the origin-private
   * file system), as a person's next visit has. Open it before closing this page (a Chromium page's
   * context closes with it).
   */
  newTab(): Promise<TestPage>
  /** Closes the tab as a person does, mid-whatever: no `beforeunload` prompt is run. */
  close(): Promise<void>
}

export interface BrowserSession {
  name: BrowserName
  /** A page in its own fresh context (no cookies or storage shared with other pages). */
  newPage(): Promise<TestPage>
  close(): Promise<void>
}

/** Starts `name`; a browser that is not installed fails with the command that installs it. */
export function launchBrowser(name: BrowserName): Promise<BrowserSession> {
  return name === 'chromium' ? launchChromiumSession() : launchFirefox()
}

async function launchChromiumSession(): Promise<BrowserSession> {
  const chromium = await launchChromium()
  return {
    name: 'chromium',
    newPage: async () => playwrightPage(await chromium.newPage()),
    close: () => chromium.close(),
  }
}

/**
 * Firefox ESR over WebDriver BiDi, headless, as root without a display (2-3 s to start). Puppeteer
 * gives it a fresh temporary profile and removes it on close.
 */
async function launchFirefox(): Promise<BrowserSession> {
  await access(FIREFOX_PATH, constants.X_OK).catch(() => {
    throw new Error(
      `Firefox ESR not found at ${FIREFOX_PATH}: install it with apt-get install -y --no-install-recommends firefox-esr`,
    )
  })
  const browser: PuppeteerBrowser = await puppeteer.launch({
    browser: 'firefox',
    executablePath: FIREFOX_PATH,
    headless: true,
    extraPrefsFirefox: {
      // No update checks, telemetry or first-run pages: nothing but the test's own traffic.
      'app.update.enabled': false,
      'datareporting.policy.dataSubmissionEnabled': false,
      'browser.shell.checkDefaultBrowser': false,
    },
  })
  const closers: Array<() => Promise<unknown>> = []
  /** Folders of picked files; removed with their page, and with the browser for pages a failed test left open. */
  const folders: string[] = []
  return {
    name: 'firefox',
    async newPage() {
      const context = await browser.createBrowserContext()
      closers.push(() => context.close().catch(() => {}))
      return puppeteerPage(await context.newPage(), folders)
    },
    async close() {
      await Promise.all(closers.map((close) => close()))
      await browser.close()
      await Promise.all(folders.map((dir) => rm(dir, { recursive: true, force: true })))
    },
  }
}

function playwrightPage(page: PlaywrightPage): TestPage {
  // A listener from the start turns Chromium's file-dialog interception on before any dialog: one
  // added with the key press that opens it may come too late (a click's round trips hid that).
  page.on('filechooser', () => {})
  const errors: string[] = []
  page.on('console', (message) => message.type() === 'error' && errors.push(message.text()))
  page.on('pageerror', (error) => errors.push(String(error)))
  return {
    browser: 'chromium',
    errors,
    goto: async (url) => void (await page.goto(url)),
    async reload() {
      const leave = (dialog: import('playwright-core').Dialog) =>
        void (dialog.type() === 'beforeunload' && dialog.accept())
      page.on('dialog', leave)
      try {
        await page.reload()
      } finally {
        page.off('dialog', leave)
      }
    },
    evaluate: (fn, arg) => page.evaluate(fn as never, arg) as never,
    waitForFunction: async (fn, arg, timeout = 30_000) =>
      void (await page.waitForFunction(fn as never, arg, { timeout })),
    setInputFiles: (selector, files) => page.setInputFiles(selector, files),
    async pickWithDialog(open, files) {
      const [chooser] = await Promise.all([page.waitForEvent('filechooser'), open()])
      await chooser.setFiles(files)
    },
    // Chromium's dialog is intercepted once a listener is on: nothing to dismiss.
    dismissDialog: async (open) =>
      void (await Promise.all([page.waitForEvent('filechooser', { timeout: 10_000 }), open()])),
    click: (selector) => page.click(selector),
    doubleClickAt: (x, y) => page.mouse.dblclick(x, y),
    press: (key) => page.keyboard.press(key),
    newTab: async () => playwrightPage(await page.context().newPage()),
    close: () => page.close(),
  }
}

function puppeteerPage(page: PuppeteerPage, sessionFolders: string[]): TestPage {
  const errors: string[] = []
  page.on('console', (message) => message.type() === 'error' && errors.push(message.text()))
  page.on('pageerror', (error) => errors.push(String(error)))
  /**
   * Puppeteer uploads files from paths, and Firefox reads a picked File from disk only when it
   * sends it (Playwright hands Chromium the bytes): each pick is written to a folder of its own
   * that stays until the page closes.
   */
  const folders: string[] = []
  async function withFiles<T>(files: FileToPick[] | string[], use: (paths: string[]) => Promise<T>): Promise<T> {
    if (files.every((file) => typeof file === 'string')) return use(files as string[])
    const dir = await mkdtemp(join(tmpdir(), 'updraft-pick-'))
    folders.push(dir)
    sessionFolders.push(dir)
    const paths = await Promise.all(
      (files as FileToPick[]).map(async (file, i) => {
        // A folder per file, so two files of one name do not overwrite each other.
        const path = join(dir, String(i))
        await mkdir(path)
        await writeFile(join(path, file.name), file.buffer)
        return join(path, file.name)
      }),
    )
    return use(paths)
  }
  return {
    browser: 'firefox',
    errors,
    goto: async (url) => void (await page.goto(url)),
    async reload() {
      const leave = (dialog: import('puppeteer-core').Dialog) =>
        void (dialog.type() === 'beforeunload' && dialog.accept())
      page.on('dialog', leave)
      try {
        await page.reload()
      } finally {
        page.off('dialog', leave)
      }
    },
    evaluate: (fn, arg) => page.evaluate(fn as never, arg) as never,
    // Puppeteer's own waitForFunction over BiDi never passed the argument here (the wait timed
    // out with the condition true): poll with evaluate instead, every 50 ms.
    async waitForFunction(fn, arg, timeout = 30_000) {
      const deadline = Date.now() + timeout
      while (!(await page.evaluate(fn as never, arg))) {
        if (Date.now() > deadline) throw new Error(`waitForFunction: ${timeout} ms exceeded`)
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    },
    async setInputFiles(selector, files) {
      const input = await page.$(selector)
      if (!input) throw new Error(`no element matches ${selector}`)
      await withFiles(files, (paths) =>
        (input as unknown as { uploadFile(...paths: string[]): Promise<void> }).uploadFile(...paths),
      )
    },
    async pickWithDialog(open, files) {
      const [chooser] = await Promise.all([page.waitForFileChooser({ timeout: 10_000 }), open()])
      await withFiles(files, (paths) => chooser.accept(paths))
    },
    async dismissDialog(open) {
      const [chooser] = await Promise.all([page.waitForFileChooser({ timeout: 10_000 }), open()])
      await chooser.cancel()
    },
    click: (selector) => page.click(selector),
    // One WebDriver action sequence: Firefox counts the clicks of a series within it.
    doubleClickAt: (x, y) => page.mouse.click(x, y, { count: 2 }),
    async press(key) {
      const keys = key.split('+')
      for (const held of keys.slice(0, -1)) await page.keyboard.down(held as never)
      // Puppeteer's BiDi keyboard knows the space bar as ' ' only.
      await page.keyboard.press((keys.at(-1) === 'Space' ? ' ' : keys.at(-1)) as never)
      for (const held of keys.slice(0, -1).reverse()) await page.keyboard.up(held as never)
    },
    newTab: async () => puppeteerPage(await page.browserContext().newPage(), sessionFolders),
    async close() {
      await page.close()
      await Promise.all(folders.map((dir) => rm(dir, { recursive: true, force: true })))
    },
  }
}
