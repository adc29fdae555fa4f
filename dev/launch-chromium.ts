import { access, constants } from 'node:fs/promises'
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core'

/** Debian's `chromium` package; no Playwright-downloaded browser (ARCHITECTURE.md, "Real parts in tests"). */
export const CHROMIUM_PATH = '/usr/bin/chromium'

/** The flags ARCHITECTURE.md names: no sandbox or GPU in CI, no QUIC, and no background traffic. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]

export interface ChromiumSession {
  browser: Browser
  /** A page in its own fresh context (no cookies, cache or storage shared with other pages). */
  newPage(): Promise<Page>
  /** Closes every page and the browser; Playwright then deletes the profile folder. */
  close(): Promise<void>
}

/**
 * Starts the system Chromium. Playwright gives `launch()` a fresh `--user-data-dir` (a mkdtemp
 * folder it removes on close); passing `--user-data-dir` ourselves is refused by `launch()`.
 * A missing browser throws the install command: browser tests fail, they never skip.
 */
export async function launchChromium(): Promise<ChromiumSession> {
  await access(CHROMIUM_PATH, constants.X_OK).catch(() => {
    throw new Error(`Chromium not found at ${CHROMIUM_PATH}: install it with apt-get install -y chromium`)
  })
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS })
  const contexts: BrowserContext[] = []
  return {
    browser,
    async newPage() {
      const context = await browser.newContext()
      contexts.push(context)
      return context.newPage()
    },
    async close() {
      await Promise.all(contexts.map((context) => context.close()))
      await browser.close()
    },
  }
}
