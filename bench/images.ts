import { build } from 'esbuild'
import { BROWSER_LABELS, BROWSERS, launchBrowser, type TestPage } from '../dev/browsers.ts'
import { installPhotoMaker, type MakePhoto } from '../dev/photos.ts'
import { serveHandler } from '../dev/serve-handler.ts'
import type * as Images from '../engine/opt-ins/images/index.ts'
import { type Benchmark, fixed, type Goal, median, type Table } from './lib/report.ts'

/** Photo sizes a phone takes: 12 MP (4:3), 8 MP, and a 4K frame (16:9). */
const PHOTOS = [
  { label: '12 MP, 4000×3000', width: 4000, height: 3000 },
  { label: '8 MP, 3264×2448', width: 3264, height: 2448 },
  { label: '4K, 3840×2160', width: 3840, height: 2160 },
]
const QUICK_PHOTOS = [{ label: '1 MP, 1200×900', width: 1200, height: 900 }]
/** What each photo is shrunk to: the opt-in's defaults, and WebP. */
const SETTINGS: Array<{ label: string; options: Images.ShrinkImageOptions }> = [
  { label: 'JPEG q0.8, 2048 px (defaults)', options: {} },
  { label: 'WebP q0.8, 2048 px', options: { type: 'image/webp' } },
]
/** Camera JPEGs are written at high quality: 0.92 here. */
const SOURCE_QUALITY = 0.92

interface Measured {
  before: number
  after: number
  type: string
  width: number
  height: number
  ms: number[]
}

/**
 * Issue 37: `shrinkImage` on photo-sized JPEGs in real Chromium and Firefox ESR: bytes before and
 * after, and the time per image (decode, draw, encode in the opt-in's worker, the result posted back),
 * the median of the rounds after one warm-up that starts the worker.
 */
export const images: Benchmark = {
  name: 'images',
  title: '11. Images made smaller in the page (`updraft-s3/images`, Chromium and Firefox ESR)',
  async run({ quick, log }) {
    const photos = quick ? QUICK_PHOTOS : PHOTOS
    const rounds = quick ? 1 : 5
    const settings = quick
      ? SETTINGS.map(({ label, options }) => ({ label, options: { ...options, maxWidth: 600, maxHeight: 600 } }))
      : SETTINGS
    const site = await serveSite()
    const tables: Table[] = []
    const goals: Goal[] = []
    const headlines: string[] = []
    try {
      const rows: string[][] = []
      const ratios: number[] = []
      for (const browser of BROWSERS) {
        const session = await launchBrowser(browser)
        try {
          const page = await session.newPage()
          await page.goto(`${site.origin}/`)
          await page.waitForFunction(() => 'images' in window)
          await page.evaluate(installPhotoMaker)
          for (const photo of photos) {
            for (const { label, options } of settings) {
              log(`${BROWSER_LABELS[browser]}: ${photo.label}, ${label}`)
              const measured = await shrinkInPage(page, { ...photo, options, rounds })
              if (Object.keys(options).every((name) => name === 'maxWidth' || name === 'maxHeight'))
                ratios.push(measured.after / measured.before)
              rows.push([
                BROWSER_LABELS[browser],
                photo.label,
                label,
                fixed(measured.before / 1000),
                fixed(measured.after / 1000),
                `${fixed((100 * measured.after) / measured.before)}%`,
                `${measured.width}×${measured.height} ${measured.type.replace('image/', '')}`,
                fixed(median(measured.ms)),
              ])
            }
          }
        } finally {
          await session.close()
        }
      }
      tables.push({
        title: `shrinkImage per photo (source JPEG q${SOURCE_QUALITY}, synthetic: colour fields under fine noise), median of ${rounds} after a warm-up`,
        columns: [
          'browser',
          'photo',
          'written as',
          'before (KB)',
          'after (KB)',
          'after / before',
          'result',
          'ms per image',
        ],
        rows,
      })
      // The defaults' JPEGs: what a page gets from shrinkImages() with no options.
      const worst = Math.max(...ratios)
      goals.push({
        goal: 'a photo over 2048 px is sent in at most half its bytes (defaults)',
        figure: `at most ${fixed(100 * worst)}% of the bytes`,
        met: worst <= 0.5,
        note: 'Synthetic noise is harder on JPEG than most photos: a phone photo usually shrinks further.',
      })
      headlines.push(
        `Images: photos of ${photos.map(({ label }) => label.split(',')[0]).join(', ')} go in ${fixed(100 * Math.min(...ratios))}–${fixed(100 * worst)}% of their bytes as 2048 px JPEGs (\`updraft-s3/images\` defaults)`,
      )
    } finally {
      await site.close()
    }
    return {
      tables,
      goals,
      headlines,
      notes: [
        'Time is `shrinkImage` as the page awaits it: reading the file, decoding it with its EXIF orientation, drawing it to fit (imageSmoothingQuality high), encoding, and the result posted back from the worker. The page stays responsive meanwhile: the work runs in the worker.',
        'The machine has 2 shared cores: compare browsers and settings within one run, not across runs.',
      ],
    }
  },
}

/** The opt-in's bundle as a page ships it (minified: the worker runs from the minified text), on a page of its own origin. */
async function serveSite() {
  const bundle = await build({
    stdin: {
      contents: `import * as images from './engine/opt-ins/images/index.ts'; window.images = images`,
      loader: 'ts',
      resolveDir: process.cwd(),
    },
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    write: false,
    logLevel: 'error',
  })
  const code = bundle.outputFiles[0]!.text
  const html =
    '<!doctype html><meta charset="utf-8"><title>images</title><script type="module" src="/images.js"></script>'
  return serveHandler(
    async (request) =>
      new URL(request.url).pathname === '/images.js'
        ? new Response(code, { headers: { 'content-type': 'text/javascript; charset=utf-8' } })
        : new Response(html, { headers: { 'content-type': 'text/html; charset=utf-8' } }),
    '/',
  )
}

const shrinkInPage = (
  page: TestPage,
  run: { width: number; height: number; options: Images.ShrinkImageOptions; rounds: number },
) =>
  page.evaluate(
    async ({ width, height, options, rounds, quality }): Promise<Measured> => {
      const { images, makePhoto } = window as unknown as { images: typeof Images; makePhoto: MakePhoto }
      const blob = await makePhoto(width, height, quality)
      const photo = new File([blob], 'photo.jpg', { type: 'image/jpeg' })
      const ms: number[] = []
      let result = photo
      for (let round = -1; round < rounds; round++) {
        const start = performance.now()
        result = await images.shrinkImage(photo, options)
        if (round >= 0) ms.push(performance.now() - start)
      }
      const bitmap = await createImageBitmap(result)
      return {
        before: photo.size,
        after: result.size,
        type: result.type,
        width: bitmap.width,
        height: bitmap.height,
        ms,
      }
    },
    { ...run, quality: SOURCE_QUALITY },
  )
