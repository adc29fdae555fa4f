// updraft-s3/images in Chromium and in Firefox ESR, through Updraft's endpoint to Ceph RGW
// (presigned mode: the upload API's /complete verifies every object's size and file signature
// against what the page announced). The page makes its images in a canvas — a 4000×3000 photo-like
// JPEG given an EXIF Orientation 6 segment by hand (dev/photos.ts), a PNG with transparency, a small JPEG — and
// takes a GIF, an SVG, a HEIC header and a damaged JPEG as they are; each goes through
// `shrinkImage` (in the opt-in's worker) and `upload()`. Every object is read back from RGW: its
// bytes are the ones the page sent, its Content-Type and size the announced ones, and the shrunk
// ones are decoded in the page again to check size, orientation and transparency. A page whose CSP
// forbids blob: workers gets the same result, drawn on the page. And the hooks' `prepare` end to
// end: a photo dropped on `<UploadDropzone prepare={shrinkImages()}>` over the upload API's
// maxFileSize as picked is judged as prepared, under it, and stored upright.
import { randomUUID } from 'node:crypto'
import { HeadObjectCommand } from '@aws-sdk/client-s3'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { BROWSER_LABELS, BROWSERS, type BrowserSession, launchBrowser, type TestPage } from '../dev/browsers.ts'
import { installPhotoMaker, type MakePhoto } from '../dev/photos.ts'
import { readObject, sdkClient, sha256 } from '../dev/s3-client.ts'
import { type ServedHandler, serveHandler } from '../dev/serve-handler.ts'
import { storeConfig } from '../dev/stores.ts'
import type * as Engine from '../engine/index.ts'
import type * as Images from '../engine/opt-ins/images/index.ts'
import { createUploadHandler } from '../server/index.ts'
import { bundleForBrowser } from './helpers/engine-bundle.ts'
import { type EnginePageIn, openEnginePageIn } from './helpers/engine-page.ts'
import { type StaticServer, startStaticServer } from './helpers/static-server.ts'

const rgw = inject('rgw')
const reader = sdkClient(rgw)
afterAll(() => reader.destroy())

/** What the page sent for one file and what the upload answered. */
interface Sent {
  key?: string
  error?: string
  /** `shrinkImage` gave the picked File object back. */
  same: boolean
  picked: { name: string; type: string; size: number; sha256: string }
  sent: { name: string; type: string; size: number; sha256: string; lastModified: number }
  /** Images the opt-in's worker answered for while it was shrunk. */
  workers: number
}

/** A file the page makes: `kind` and its parameters, so the same bytes can be made in either browser. */
type Make =
  | { kind: 'jpeg'; width: number; height: number; quality: number; orientation?: number }
  | { kind: 'png'; width: number; height: number }
  | { kind: 'bytes'; base64: string; type: string }

interface Job {
  name: string
  make: Make
  options?: Images.ShrinkImageOptions
  api: string
}

/** Installs the page's helpers: file makers (the photo from dev/photos.ts), a decoder that reads corner pixels. */
const installKit = async (page: TestPage) => {
  await page.evaluate(installPhotoMaker)
  await page.evaluate(() => {
    const hex = async (blob: Blob) =>
      Array.from(new Uint8Array(await crypto.subtle.digest('SHA-256', await blob.arrayBuffer())), (b) =>
        b.toString(16).padStart(2, '0'),
      ).join('')
    const make = async (spec: Make): Promise<Blob> => {
      if (spec.kind === 'bytes')
        return new Blob([Uint8Array.from(atob(spec.base64), (c) => c.charCodeAt(0))], { type: spec.type })
      if (spec.kind === 'png') {
        // A smooth picture with transparency: clear on the left, opaque on the right, a gradient between.
        const canvas = Object.assign(document.createElement('canvas'), { width: spec.width, height: spec.height })
        const context = canvas.getContext('2d')!
        const gradient = context.createLinearGradient(0, 0, spec.width, spec.height)
        gradient.addColorStop(0, 'rgba(255, 0, 0, 0)')
        gradient.addColorStop(0.3, 'rgba(255, 0, 0, 0)')
        gradient.addColorStop(0.7, 'rgba(0, 90, 255, 1)')
        gradient.addColorStop(1, 'rgba(0, 200, 80, 1)')
        context.fillStyle = gradient
        context.fillRect(0, 0, spec.width, spec.height)
        return new Promise<Blob>((resolve) => canvas.toBlob((blob) => resolve(blob!), 'image/png'))
      }
      return (window as unknown as { makePhoto: MakePhoto }).makePhoto(
        spec.width,
        spec.height,
        spec.quality,
        spec.orientation,
      )
    }
    /** Width, height and the colour (r, g, b, a) of 5 % in from each corner, decoded with the orientation applied. */
    const inspect = async (base64: string, type: string) => {
      const bitmap = await createImageBitmap(
        new Blob([Uint8Array.from(atob(base64), (c) => c.charCodeAt(0))], { type }),
        { imageOrientation: 'from-image' },
      )
      const { width, height } = bitmap
      const canvas = Object.assign(document.createElement('canvas'), { width, height })
      const context = canvas.getContext('2d', { willReadFrequently: true })!
      context.drawImage(bitmap, 0, 0)
      const at = (fx: number, fy: number) =>
        Array.from(context.getImageData(Math.floor(fx * (width - 1)), Math.floor(fy * (height - 1)), 1, 1).data)
      return {
        width,
        height,
        topLeft: at(0.05, 0.05),
        topRight: at(0.95, 0.05),
        bottomLeft: at(0.05, 0.95),
        bottomRight: at(0.95, 0.95),
      }
    }
    let workers = 0
    const NativeWorker = Worker
    window.Worker = class extends NativeWorker {
      constructor(url: string | URL, options?: WorkerOptions) {
        super(url, options)
        this.addEventListener('message', (event: MessageEvent) => void (event.data?.outcome && workers++))
      }
    }
    Object.assign(window, { kit: { make, hex, inspect, workers: () => workers } })
  })
}

interface Kit {
  make(spec: Make): Promise<Blob>
  hex(blob: Blob): Promise<string>
  inspect(
    base64: string,
    type: string,
  ): Promise<{
    width: number
    height: number
    topLeft: number[]
    topRight: number[]
    bottomLeft: number[]
    bottomRight: number[]
  }>
  workers(): number
}

/** Makes the file in the page, shrinks it, uploads what `shrinkImage` gave through the upload API (presigned). */
const shrinkAndUpload = (page: TestPage, job: Job) =>
  page.evaluate(async ({ name, make, options, api }: Job): Promise<Sent> => {
    const { updraft, kit } = window as unknown as { updraft: typeof Engine & typeof Images; kit: Kit }
    const blob = await kit.make(make)
    const picked = new File([blob], name, { type: blob.type, lastModified: 1_700_000_000_000 })
    const workersBefore = kit.workers()
    const sent = await updraft.shrinkImage(picked, options)
    const outcome: Sent = {
      same: sent === picked,
      picked: { name: picked.name, type: picked.type, size: picked.size, sha256: await kit.hex(picked) },
      sent: {
        name: sent.name,
        type: sent.type,
        size: sent.size,
        sha256: await kit.hex(sent),
        lastModified: sent.lastModified,
      },
      workers: kit.workers() - workersBefore,
    }
    try {
      outcome.key = (await updraft.upload(sent, { api, strategy: 'presigned' })).key
    } catch (error) {
      outcome.error = `${(error as Error).name}: ${(error as Error).message}`
    }
    return outcome
  }, job)

/** The stored object: its bytes equal what the page sent, and its Content-Type and length the announced ones. */
async function expectStored(outcome: Sent): Promise<Uint8Array> {
  expect(outcome.error).toBeUndefined()
  const stored = await readObject(reader, rgw.bucket, outcome.key!)
  expect(sha256(stored)).toBe(outcome.sent.sha256)
  expect(stored.length).toBe(outcome.sent.size)
  const head = await reader.send(new HeadObjectCommand({ Bucket: rgw.bucket, Key: outcome.key! }))
  expect(head.ContentType).toBe(outcome.sent.type)
  expect(head.ContentLength).toBe(outcome.sent.size)
  expect(outcome.key!.endsWith(`/${outcome.sent.name}`)).toBe(true)
  return stored
}

const base64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64')
/** GIF89a, 1×1, one transparent pixel: the smallest GIF there is. */
const GIF = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64')
const SVG = Buffer.from(
  '<svg xmlns="http://www.w3.org/2000/svg" width="4000" height="3000"><rect width="4000" height="3000" fill="#c33"/></svg>',
)
/** An ISO-BMFF `ftyp heic` box and bytes no decoder reads: a phone's HEIC as Chromium and Firefox see it. */
const HEIC = Buffer.concat([
  Buffer.from([0, 0, 0, 0x18]),
  Buffer.from('ftypheic\0\0\0\0mif1heic'),
  Buffer.from(Array.from({ length: 4000 }, (_, i) => (i * 73) & 255)),
])
/** A JPEG's first marker, then bytes that are no JPEG: a damaged file. */
const DAMAGED_JPEG = Buffer.concat([
  Buffer.from([0xff, 0xd8, 0xff, 0xe0]),
  Buffer.from(Array.from({ length: 6000 }, (_, i) => (i * 31 + 7) & 255)),
])

/** The engine and the opt-in's own entry, as a page that imports both ships them. */
const engineWithImages = () =>
  bundleForBrowser({
    contents: `export * from './engine/index.ts'; export { shrinkImage, shrinkImages } from './engine/opt-ins/images/index.ts'`,
  })

describe.each(BROWSERS)('updraft-s3/images in %s, through the upload API to RGW', (browser) => {
  let engine: EnginePageIn
  let page: TestPage
  let server: ServedHandler
  beforeAll(async () => {
    engine = await openEnginePageIn(browser, engineWithImages())
    page = engine.page
    await installKit(page)
    // SVG is active content: the upload API takes it only when listed by its exact type.
    server = await serveHandler(
      createUploadHandler(
        storeConfig(rgw, { allowedOrigins: [engine.origin], allowedTypes: ['image/*', 'image/svg+xml'] }),
      ),
    )
  })
  afterAll(async () => {
    await server?.close()
    await engine?.close()
  })
  const name = (label: string) => `${label}-${browser}-${randomUUID().slice(0, 8)}`

  it(`${BROWSER_LABELS[browser]}: a 4000×3000 JPEG with EXIF Orientation 6 arrives upright at 1536×2048, smaller, shrunk in a worker; the stored bytes are the ones sent`, async () => {
    const outcome = await shrinkAndUpload(page, {
      name: `${name('portrait')}.jpg`,
      make: { kind: 'jpeg', width: 4000, height: 3000, quality: 0.92, orientation: 6 },
      api: server.api,
    })
    // The fixture is what it claims: the browser shows the picked file as a 3000×4000 portrait.
    expect(outcome.same).toBe(false)
    expect(outcome.sent.size).toBeLessThan(outcome.picked.size)
    expect(outcome.sent).toMatchObject({
      type: 'image/jpeg',
      name: outcome.picked.name,
      lastModified: 1_700_000_000_000,
    })
    expect(outcome.workers).toBe(1) // drawn in the worker, not on the page
    const stored = await expectStored(outcome)
    const seen = await page.evaluate(
      ({ data }) => (window as unknown as { kit: Kit }).kit.inspect(data, 'image/jpeg'),
      { data: base64(stored) },
    )
    expect([seen.width, seen.height]).toEqual([1536, 2048])
    // Orientation 6 turns the picture a quarter clockwise: its top left (red) is now top right,
    // its bottom left (blue) top left, its top right (green) bottom right.
    const near = (rgb: number[], expected: number[]) =>
      expect(
        rgb.slice(0, 3).every((value, i) => Math.abs(value - expected[i]!) < 60),
        `${rgb} near ${expected}`,
      ).toBe(true)
    near(seen.topRight, [245, 35, 35])
    near(seen.topLeft, [35, 35, 245])
    near(seen.bottomRight, [35, 215, 35])
    near(seen.bottomLeft, [143, 143, 143])
    // No EXIF left (a canvas writes pixels only): no APP1 "Exif" segment in the stored JPEG.
    expect(Buffer.from(stored).includes(Buffer.from('Exif\0\0'))).toBe(false)
  })

  it(`${BROWSER_LABELS[browser]}: asked for WebP, the same photo goes as image/webp named .webp`, async () => {
    const picked = name('photo')
    const outcome = await shrinkAndUpload(page, {
      name: `${picked}.jpg`,
      make: { kind: 'jpeg', width: 4000, height: 3000, quality: 0.92 },
      options: { type: 'image/webp', quality: 0.8 },
      api: server.api,
    })
    expect(outcome.sent).toMatchObject({ type: 'image/webp', name: `${picked}.webp` })
    expect(outcome.sent.size).toBeLessThan(outcome.picked.size)
    const stored = await expectStored(outcome)
    expect(Buffer.from(stored.subarray(0, 4)).toString()).toBe('RIFF')
    expect(Buffer.from(stored.subarray(8, 12)).toString()).toBe('WEBP')
    const seen = await page.evaluate(
      ({ data }) => (window as unknown as { kit: Kit }).kit.inspect(data, 'image/webp'),
      { data: base64(stored) },
    )
    expect([seen.width, seen.height]).toEqual([2048, 1536])
  })

  it(`${BROWSER_LABELS[browser]}: a 3000×2000 PNG with transparency stays PNG, resized to 2048 wide, its clear corner still clear`, async () => {
    const outcome = await shrinkAndUpload(page, {
      name: `${name('clear')}.png`,
      make: { kind: 'png', width: 3000, height: 2000 },
      api: server.api,
    })
    expect(outcome.same).toBe(false)
    expect(outcome.sent.type).toBe('image/png')
    expect(outcome.sent.size).toBeLessThan(outcome.picked.size)
    const stored = await expectStored(outcome)
    const seen = await page.evaluate(({ data }) => (window as unknown as { kit: Kit }).kit.inspect(data, 'image/png'), {
      data: base64(stored),
    })
    expect([seen.width, seen.height]).toEqual([2048, 1365])
    expect(seen.topLeft[3]).toBe(0)
    expect(seen.bottomRight[3]).toBe(255)
  })

  it(`${BROWSER_LABELS[browser]}: a GIF, an SVG, a HEIC and a damaged JPEG go unchanged (the same File), byte-identical on RGW, /complete accepting each`, async () => {
    const files = [
      { label: 'anim', ext: 'gif', bytes: GIF, type: 'image/gif' },
      { label: 'vector', ext: 'svg', bytes: SVG, type: 'image/svg+xml' },
      { label: 'phone', ext: 'heic', bytes: HEIC, type: 'image/heic' },
      { label: 'damaged', ext: 'jpg', bytes: DAMAGED_JPEG, type: 'image/jpeg' },
    ]
    for (const { label, ext, bytes, type } of files) {
      const outcome = await shrinkAndUpload(page, {
        name: `${name(label)}.${ext}`,
        make: { kind: 'bytes', base64: base64(bytes), type },
        api: server.api,
      })
      expect(outcome.same, label).toBe(true)
      expect(outcome.sent.sha256).toBe(sha256(bytes))
      const stored = await expectStored(outcome)
      expect(Buffer.from(stored).equals(bytes), label).toBe(true)
    }
  })

  it(`${BROWSER_LABELS[browser]}: an 800×600 JPEG (already within the box) goes unchanged, byte-identical`, async () => {
    const outcome = await shrinkAndUpload(page, {
      name: `${name('small')}.jpg`,
      make: { kind: 'jpeg', width: 800, height: 600, quality: 0.9 },
      api: server.api,
    })
    expect(outcome.same).toBe(true)
    expect(outcome.sent.sha256).toBe(outcome.picked.sha256)
    await expectStored(outcome)
  })

  it(`${BROWSER_LABELS[browser]}: a JPEG the re-encoding would not make smaller (box barely under its size, quality 1) goes unchanged`, async () => {
    const outcome = await shrinkAndUpload(page, {
      name: `${name('dense')}.jpg`,
      make: { kind: 'jpeg', width: 1200, height: 900, quality: 0.5 },
      options: { maxWidth: 1199, maxHeight: 1199, quality: 1 },
      api: server.api,
    })
    // Drawn and encoded (the worker answered), then dropped: larger than the picked file.
    expect(outcome.workers).toBe(1)
    expect(outcome.same).toBe(true)
    await expectStored(outcome)
  })
})

describe.each(BROWSERS)("a page whose CSP forbids blob: workers (worker-src 'self'), in %s", (browser) => {
  let site: StaticServer
  let session: BrowserSession
  let page: TestPage
  beforeAll(async () => {
    const html = `<!doctype html><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="worker-src 'self'">
<title>updraft, no blob: workers</title><script type="module">import * as updraft from '/engine.js'; window.updraft = updraft</script>`
    site = await startStaticServer({
      '/': { type: 'text/html; charset=utf-8', body: html },
      '/engine.js': { type: 'text/javascript; charset=utf-8', body: (await engineWithImages()).code },
    })
    session = await launchBrowser(browser)
    page = await session.newPage()
    await page.goto(`${site.origin}/`)
    await page.waitForFunction(() => 'updraft' in window)
    await installKit(page)
  })
  afterAll(async () => {
    await session?.close()
    await site?.close()
  })

  it(`${BROWSER_LABELS[browser]}: the photo is shrunk on the page instead — upright at 1536×2048, smaller, no worker answering`, async () => {
    for (const round of [1, 2]) {
      const outcome = await page.evaluate(async () => {
        const { updraft, kit } = window as unknown as { updraft: typeof Images; kit: Kit }
        const blob = await kit.make({ kind: 'jpeg', width: 4000, height: 3000, quality: 0.92, orientation: 6 })
        const picked = new File([blob], 'portrait.jpg', { type: 'image/jpeg' })
        const before = kit.workers()
        const sent = await updraft.shrinkImage(picked)
        const bytes = new Uint8Array(await sent.arrayBuffer())
        let binary = ''
        for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000))
        return {
          pickedSize: picked.size,
          size: sent.size,
          type: sent.type,
          workers: kit.workers() - before,
          seen: await kit.inspect(btoa(binary), sent.type),
        }
      })
      expect(outcome.workers, `round ${round}`).toBe(0)
      expect(outcome.type).toBe('image/jpeg')
      expect(outcome.size).toBeLessThan(outcome.pickedSize)
      expect([outcome.seen.width, outcome.seen.height]).toEqual([1536, 2048])
      expect(outcome.seen.topRight[0]).toBeGreaterThan(180) // the red corner, turned to the top right
      expect(outcome.seen.topRight[2]).toBeLessThan(100)
    }
  })
})

/** A page with `<UploadDropzone prepare={shrinkImages()}>` (React bundled in), its API from `?api=`. */
async function dropzonePage(): Promise<string> {
  const { code } = await bundleForBrowser({
    react: true,
    contents: `
        import { createElement as h } from 'react'
        import { createRoot } from 'react-dom/client'
        import { UploadDropzone } from './src/ui/index.ts'
        import { shrinkImages } from './engine/opt-ins/images/index.ts'
        window.stored = []
        const api = new URL(location.href).searchParams.get('api')
        const onUploadComplete = (result) => window.stored.push(result.key)
        createRoot(document.getElementById('app')).render(h(UploadDropzone, { api, strategy: 'presigned', prepare: shrinkImages(), onUploadComplete }))`,
  })
  return code
}

describe.each(BROWSERS)(
  '<UploadDropzone prepare={shrinkImages()}> in %s, to RGW through an upload API whose maxFileSize is 1 MB',
  (browser) => {
    let site: StaticServer
    let server: ServedHandler
    let session: BrowserSession
    beforeAll(async () => {
      site = await startStaticServer({
        '/': {
          type: 'text/html; charset=utf-8',
          body: '<!doctype html><html lang="en"><meta charset="utf-8"><title>photos</title><main><div id="app"></div></main><script type="module" src="/zone.js"></script>',
        },
        '/zone.js': { type: 'text/javascript; charset=utf-8', body: await dropzonePage() },
      })
      server = await serveHandler(
        createUploadHandler(storeConfig(rgw, { allowedOrigins: [site.origin], maxFileSize: 1_000_000 })),
      )
      session = await launchBrowser(browser)
    })
    afterAll(async () => {
      await session?.close()
      await server?.close()
      await site?.close()
    })

    it(`${BROWSER_LABELS[browser]}: a dropped 4000×3000 photo (over the limit as picked) is prepared under it, judged as prepared, stored upright at 1536×2048; the row is done`, async () => {
      const page = await session.newPage()
      await page.goto(`${site.origin}/?api=${encodeURIComponent(server.api)}`)
      // The limits from /info are shown once the upload API answered: the page checks files with them from then on.
      await page.waitForFunction(() => !!document.querySelector('.updraft-zone .updraft-hint'))
      await page.evaluate(installPhotoMaker)
      const picked = await page.evaluate(async () => {
        const blob = await (window as unknown as { makePhoto: MakePhoto }).makePhoto(4000, 3000, 0.92, 6)
        const data = new DataTransfer()
        data.items.add(new File([blob], 'portrait.jpg', { type: 'image/jpeg' }))
        const zone = document.querySelector<HTMLElement>('.updraft-zone')!
        for (const type of ['dragenter', 'dragover', 'drop'])
          zone.dispatchEvent(new DragEvent(type, { dataTransfer: data, bubbles: true, cancelable: true }))
        return blob.size
      })
      expect(picked).toBeGreaterThan(1_000_000)
      await page.waitForFunction(
        () => {
          const row = document.querySelector<HTMLElement>('[data-testid=upload-row]')
          return row && ['done', 'error', 'aborted'].includes(row.dataset.status ?? '')
        },
        undefined,
        60_000,
      )
      const row = await page.evaluate(() => {
        const element = document.querySelector<HTMLElement>('[data-testid=upload-row]')!
        return {
          status: element.dataset.status,
          text: element.innerText,
          stored: (window as unknown as { stored: string[] }).stored,
        }
      })
      expect(row.status, row.text).toBe('done')
      expect(row.stored).toHaveLength(1)
      const key = row.stored[0]!
      expect(key.endsWith('/portrait.jpg')).toBe(true)
      const stored = await readObject(reader, rgw.bucket, key)
      expect(stored.length).toBeLessThan(1_000_000)
      const head = await reader.send(new HeadObjectCommand({ Bucket: rgw.bucket, Key: key }))
      expect([head.ContentType, head.ContentLength]).toEqual(['image/jpeg', stored.length])
      await installKit(page)
      const seen = await page.evaluate(
        ({ data }) => (window as unknown as { kit: Kit }).kit.inspect(data, 'image/jpeg'),
        { data: base64(stored) },
      )
      expect([seen.width, seen.height]).toEqual([1536, 2048])
      expect(seen.topRight[0]).toBeGreaterThan(180)
      await page.close()
    })
  },
)
