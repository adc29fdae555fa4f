import type { Page } from 'playwright-core'
import { afterAll, beforeAll } from 'vitest'
import { type BrowserName, launchBrowser, type TestPage } from '../../dev/browsers.ts'
import { launchChromium } from '../../dev/launch-chromium.ts'
import { testBytes } from '../../dev/s3-client.ts'
import { type BrowserBundle, bundleEngine } from './engine-bundle.ts'
import { startStaticServer } from './static-server.ts'

/** The engine's bundle loaded in a real Chromium page, as `window.updraft`. */
export interface EnginePage {
  page: Page
  bundle: BrowserBundle
  /** The page's own origin: storage on another port makes every request cross-origin. */
  origin: string
  close(): Promise<void>
}

/**
 * The page loads the engine as `window.updraft`, and gets Node's own `testBytes` as
 * `window.testBytes` (its source), so a test generates in the page exactly the bytes it reads back.
 */
const PAGE_HTML = `<!doctype html><meta charset="utf-8"><title>updraft engine</title>
<script>window.testBytes = ${testBytes.toString()}</script>
<script type="module">import * as updraft from '/engine.js'; window.updraft = updraft</script>`

/** The page's site: its HTML and the bundle. */
const serveEngine = (bundle: BrowserBundle) =>
  startStaticServer({
    '/': { type: 'text/html; charset=utf-8', body: PAGE_HTML },
    '/engine.js': { type: 'text/javascript; charset=utf-8', body: bundle.code },
  })

/**
 * One browser for the whole test file: launching is the slow part. `bundled`: another bundle as
 * `window.updraft` (the engine plus an opt-in's own entry), else the engine's public entry.
 */
export async function openEnginePage(bundled?: Promise<BrowserBundle>): Promise<EnginePage> {
  const bundle = await (bundled ?? bundleEngine())
  const site = await serveEngine(bundle)
  const chromium = await launchChromium().catch(async (error: unknown) => {
    await site.close()
    throw error
  })
  const page = await chromium.newPage()
  await page.goto(`${site.origin}/`)
  await page.waitForFunction(() => 'updraft' in window)
  return {
    page,
    bundle,
    origin: site.origin,
    async close() {
      await chromium.close()
      await site.close()
    },
  }
}

/** The engine's bundle in a page of `browser` (Chromium or Firefox ESR), as `window.updraft`. */
export interface EnginePageIn {
  page: TestPage
  bundle: BrowserBundle
  origin: string
  close(): Promise<void>
}

/** {@link openEnginePage} for either browser, through the cross-browser page (dev/browsers.ts). */
export async function openEnginePageIn(browser: BrowserName, bundled?: Promise<BrowserBundle>): Promise<EnginePageIn> {
  const bundle = await (bundled ?? bundleEngine())
  const site = await serveEngine(bundle)
  const session = await launchBrowser(browser).catch(async (error: unknown) => {
    await site.close()
    throw error
  })
  const page = await session.newPage()
  await page.goto(`${site.origin}/`)
  await page.waitForFunction(() => 'updraft' in window)
  return {
    page,
    bundle,
    origin: site.origin,
    async close() {
      await session.close()
      await site.close()
    },
  }
}

/**
 * {@link openEnginePageIn} for the enclosing `describe`: opened before its tests (handed to
 * `opened`), closed after them.
 */
export function useEnginePageIn(browser: BrowserName, opened: (engine: EnginePageIn) => void): void {
  let engine: EnginePageIn | undefined
  beforeAll(async () => {
    engine = await openEnginePageIn(browser)
    opened(engine)
  })
  afterAll(() => engine?.close())
}
