// Issue 37's record-and-upload (updraft-s3/react/recording) in Chromium and in Firefox ESR, against
// Ceph RGW through the upload API (presigned; token mode with RGW's STS where named). The source is real media with no device: a canvas
// of noise (captureStream, incompressible, so the encoder makes bytes at its bitrate) and an
// AudioContext oscillator. The page logs every PUT the engine hands to XMLHttpRequest (its part
// number, body size, when it ended) and keeps the recorder's chunks: the stored object must be
// those chunks concatenated, byte for byte; every part but the last exactly 5 MiB; parts stored
// while recording went on, and while it was paused; the <video> plays the stored object and seeks.
// Also: a recording stopped within one part is one PUT; a stopped track ends the recording and
// stores it; Cancel after a part was stored leaves no object and no multipart upload on RGW.
// A tab closed mid-recording (not a Stop; both modes) is finished in a new tab of the same context
// from the copy kept in the origin-private file system: the stored object is the recorded chunks,
// the parts storage held are not sent again, no multipart upload is left on the key; Discard aborts
// it; without OPFS (getDirectory stubbed away) a recording goes as before.
// The long recording is measured in bytes, not seconds: it stops once three whole parts and 1 MiB
// more are recorded (4 parts), 15–25 s at 12 Mbit/s rather than the issue's 30 s, which would add
// ~10 s per browser and prove nothing more (the parts counted are what the issue asks for).
import { GetObjectCommand, HeadObjectCommand, ListMultipartUploadsCommand, ListPartsCommand } from '@aws-sdk/client-s3'
import { getSignedUrl } from '@aws-sdk/s3-request-presigner'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { BROWSER_LABELS, BROWSERS, type BrowserSession, launchBrowser, type TestPage } from '../dev/browsers.ts'
import { readObject, sdkClient, sha256 } from '../dev/s3-client.ts'
import { type ServedHandler, serveHandler } from '../dev/serve-handler.ts'
import { storeConfig } from '../dev/stores.ts'
import { createUploadHandler } from '../server/index.ts'
import { bundleForBrowser } from './helpers/engine-bundle.ts'
import { type StaticServer, startStaticServer } from './helpers/static-server.ts'

const MiB = 1024 * 1024
const PART = 5 * MiB
const rgw = inject('rgw')
const client = sdkClient(rgw)
let site: StaticServer
let served: ServedHandler
/** The same upload API with an STS (RGW's AssumeRole): token mode. */
let servedToken: ServedHandler

beforeAll(async () => {
  site = await startStaticServer({
    '/': {
      type: 'text/html; charset=utf-8',
      body: '<!doctype html><html lang="en"><meta charset="utf-8"><title>record</title><link rel="icon" href="data:,"><main><div id="app"></div></main><script type="module" src="/record.js"></script>',
    },
    '/record.js': { type: 'text/javascript; charset=utf-8', body: await bundleRecordPage() },
  })
  served = await serveHandler(
    // resumable: a recording kept in the browser is finished through /list-parts on the next visit.
    createUploadHandler(
      storeConfig(rgw, { allowedOrigins: [site.origin], resumable: true, logger: { error() {}, warn() {} } }),
    ),
  )
  servedToken = await serveHandler(
    createUploadHandler(
      storeConfig(rgw, {
        allowedOrigins: [site.origin],
        resumable: true,
        sts: { mode: 'assume-role', roleArn: rgw.roleArn, endpoint: rgw.endpoint },
        logger: { error() {}, warn() {} },
      }),
    ),
  )
})

afterAll(async () => {
  client.destroy()
  await served?.close()
  await servedToken?.close()
  await site?.close()
})

/** One PUT as the page handed it to XMLHttpRequest. */
interface Put {
  url?: string
  part: number
  /** The multipart upload's id, from the part's URL. */
  uploadId?: string
  size: number
  start: number
  end?: number
  status?: number
}

/** What the page kept of one recording. */
interface Recording {
  state: string
  chunks: number
  size: number
  sha256: string
  key?: string
  error?: string
  puts: Put[]
  stopAt?: number
  lastChunkAt?: number
  settledAt?: number
  text: string
}

/** One recorded chunk, as the page's `onChunk` saw it. */
interface Chunk {
  size: number
  sha256: string
}

type PageWindow = Window & {
  mount(props: Record<string, unknown>): void
  recording(): Promise<Recording>
  /** Every chunk recorded so far, once the copy in the origin-private file system has one chunk more than now. */
  afterNextKept(): Promise<{ chunks: Chunk[]; kept: number; puts: Put[] }>
  /** The chunk files of the one recording kept in the origin-private file system, in order. */
  keptChunks(): Promise<Chunk[]>
  /** The folders in the origin-private file system's `updraft-recordings` (one per kept recording). */
  keptFolders(): Promise<string[]>
  recordedBytes(): number
  canvasTrack(): MediaStreamTrack
  puts: Put[]
}
declare const window: PageWindow

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Clicks the button labelled `label` from inside the page: while Chromium encodes noise on a loaded
 * machine, Playwright's click can wait past its timeout for the page to scroll and settle. (Start
 * is a real click: the AudioContext wants a user gesture.)
 */
const press = (page: TestPage, label: string) =>
  page.evaluate((label) => document.querySelector<HTMLButtonElement>(`button[aria-label="${label}"]`)!.click(), label)

/** Polls until the origin-private file system holds no kept recording (the copy deleted, or never made). */
const noCopyKept = (page: TestPage) =>
  expect.poll(() => page.evaluate(() => window.keptFolders()), { timeout: 15_000 }).toEqual([])

describe.each(BROWSERS)('recording while uploading, in %s', (browser) => {
  let session: BrowserSession
  beforeAll(async () => {
    session = await launchBrowser(browser)
  })
  afterAll(() => session?.close())

  async function openPage(props: Record<string, unknown> = {}): Promise<TestPage> {
    const page = await session.newPage()
    await page.goto(`${site.origin}/`)
    await page.waitForFunction(() => typeof (window as unknown as PageWindow).mount === 'function')
    await page.evaluate((props) => (window as unknown as PageWindow).mount(props), {
      api: served.api,
      strategy: 'presigned',
      ...props,
    })
    return page
  }
  const recordedAtLeast = (page: TestPage, bytes: number, timeoutMs = 90_000) =>
    page.waitForFunction((bytes) => (window as unknown as PageWindow).recordedBytes() >= bytes, bytes, timeoutMs)
  const settled = (page: TestPage) =>
    page.waitForFunction(
      () =>
        ['done', 'failed', 'cancelled'].includes(
          document.querySelector<HTMLElement>('.updraft-record')!.dataset.state!,
        ),
      undefined,
      90_000,
    )
  const recording = (page: TestPage) => page.evaluate(() => (window as unknown as PageWindow).recording())

  /** The object stored is the recorder's chunks, byte for byte. */
  async function expectStored(run: Recording) {
    expect(run.error, run.text).toBeUndefined()
    expect(run.state, run.text).toBe('done')
    const stored = await readObject(client, rgw.bucket, run.key!)
    expect(stored.length).toBe(run.size)
    expect(sha256(stored)).toBe(run.sha256)
    return stored
  }

  /** The last try of each part (a retry sends a part again), in part order. */
  const partsOf = (puts: Put[]) =>
    [...new Map(puts.filter((put) => put.part > 0).map((put) => [put.part, put])).values()].sort(
      (a, b) => a.part - b.part,
    )

  it(`${BROWSER_LABELS[browser]}: ≥ 3 parts sent while recording (and while paused), every part but the last 5 MiB, byte-identical; Stop to stored logged; the <video> plays and seeks`, async () => {
    const page = await openPage({ videoBitsPerSecond: 12_000_000 })
    await page.click('.updraft-record button.updraft-primary')
    // Paused once two whole parts are recorded: the second is still to be stored, and is while the recorder waits.
    await recordedAtLeast(page, 2 * PART + 256 * 1024)
    await press(page, 'Pause recording')
    const paused = await page.evaluate(() => ({
      state: document.querySelector<HTMLElement>('.updraft-record')!.dataset.state,
      recorded: (window as unknown as PageWindow).recordedBytes(),
    }))
    expect(paused.state).toBe('paused')
    await page.waitForFunction(
      () => (window as unknown as PageWindow).puts.some((put) => put.part === 2 && put.status === 200),
      undefined,
      60_000,
    )
    const whilePaused = await page.evaluate(() => ({
      state: document.querySelector<HTMLElement>('.updraft-record')!.dataset.state,
      recorded: (window as unknown as PageWindow).recordedBytes(),
    }))
    expect(whilePaused.state).toBe('paused')
    await press(page, 'Resume recording')
    await recordedAtLeast(page, 3 * PART + MiB)
    // Three parts stored while the recorder still runs (an engine that sent only at Stop never gets here).
    await page.waitForFunction(
      () => (window as unknown as PageWindow).puts.filter((put) => put.part > 0 && put.status === 200).length >= 3,
      undefined,
      60_000,
    )
    expect(await page.evaluate(() => document.querySelector<HTMLElement>('.updraft-record')!.dataset.state)).toBe(
      'recording',
    )
    const shown = await page.evaluate(() => ({
      timer: document.querySelector('[role=timer]')!.textContent,
      figures: document.querySelector('.updraft-record .updraft-row-foot')!.textContent,
      bar: document.querySelector('[role=progressbar]')!.getAttribute('aria-valuetext'),
    }))
    expect(shown.timer).toMatch(/^\d+:\d\d$/)
    expect(shown.figures).toMatch(/sent.*recorded/)
    expect(shown.bar).toMatch(/sent of .* recorded$/)
    await press(page, 'Stop recording')
    await settled(page)
    const run = await recording(page)
    const stored = await expectStored(run)
    // The copy kept while recording is deleted once the upload is stored and verified.
    await noCopyKept(page)

    const parts = partsOf(run.puts)
    expect(parts.length).toBeGreaterThanOrEqual(4)
    expect(parts.map((put) => put.part)).toEqual(parts.map((_, index) => index + 1))
    expect(parts.slice(0, -1).every((put) => put.size === PART)).toBe(true)
    expect(parts.at(-1)!.size).toBeGreaterThan(0)
    expect(parts.at(-1)!.size).toBeLessThanOrEqual(PART)
    expect(parts.reduce((sum, put) => sum + put.size, 0)).toBe(stored.length)
    expect(run.puts.every((put) => put.part > 0)).toBe(true) // no single PUT: one multipart upload
    const storedBeforeStop = parts.filter((put) => put.status === 200 && put.end! < run.stopAt!).length
    expect(storedBeforeStop).toBeGreaterThanOrEqual(3)
    console.log(
      `[recording] ${BROWSER_LABELS[browser]}: ${run.chunks} chunks, ${stored.length} B in ${parts.length} parts (${parts.map((put) => put.size).join(', ')}); ` +
        `${storedBeforeStop} stored before Stop; Stop → stored and verified ${Math.round(run.settledAt! - run.stopAt!)} ms ` +
        `(the recorder's last chunk at +${Math.round(run.lastChunkAt! - run.stopAt!)} ms, the last part's PUT from +${Math.round(parts.at(-1)!.start - run.stopAt!)} to +${Math.round(parts.at(-1)!.end! - run.stopAt!)} ms)`,
    )

    const url = await getSignedUrl(client, new GetObjectCommand({ Bucket: rgw.bucket, Key: run.key! }), {
      expiresIn: 600,
    })
    const played = await page.evaluate(async (url) => {
      const video = document.createElement('video')
      video.muted = true
      document.body.append(video)
      const next = (type: string) =>
        new Promise<string>((resolve) => {
          const timer = setTimeout(() => resolve(`no ${type} within 20 s`), 20_000)
          video.addEventListener(type, () => (clearTimeout(timer), resolve(type)), { once: true })
          video.addEventListener(
            'error',
            () => (clearTimeout(timer), resolve(`error ${video.error?.code}: ${video.error?.message}`)),
            { once: true },
          )
        })
      const loaded = next('loadedmetadata')
      video.src = url
      const metadata = await loaded
      const duration = video.duration
      const playing = next('timeupdate')
      await video.play().catch(() => {})
      const played = await playing
      const seekTo = 4
      // Firefox's duration is at first an estimate from what it has read (0.746 s once, in a full
      // run) and a seek past it lands on it: wait until it knows the time is there, as a seek bar does.
      const knownFrom = performance.now()
      while (!(video.duration > seekTo) && performance.now() - knownFrom < 20_000)
        await new Promise((resolve) => setTimeout(resolve, 100))
      const seeking = next('seeked')
      video.currentTime = seekTo
      const seeked = await seeking
      return {
        metadata,
        duration: String(duration),
        played,
        seeked,
        currentTime: video.currentTime,
        seekable: video.seekable.length ? video.seekable.end(0) : -1,
      }
    }, url)
    const posts = await page.evaluate(
      () => (window as unknown as { posts: Array<{ path: string; start: number; end: number }> }).posts,
    )
    console.log(
      `[recording] ${BROWSER_LABELS[browser]}: API calls after Stop: ${posts
        .filter((post) => post.end > run.stopAt!)
        .map(
          (post) => `${post.path} +${Math.round(post.start - run.stopAt!)}..+${Math.round(post.end - run.stopAt!)} ms`,
        )
        .join(', ')}`,
    )
    console.log(`[recording] ${BROWSER_LABELS[browser]}: <video> ${JSON.stringify(played)}`)
    expect(played.metadata).toBe('loadedmetadata')
    expect(played.played).toBe('timeupdate')
    expect(played.seeked).toBe('seeked')
    expect(played.currentTime).toBeGreaterThan(3)
    expect(page.errors).toEqual([])
    await page.close()
  }, 240_000)

  it(`${BROWSER_LABELS[browser]}: stopped within its first part, the recording goes as one PUT`, async () => {
    const page = await openPage({ videoBitsPerSecond: 1_000_000 })
    await page.click('.updraft-record button.updraft-primary')
    await page.waitForFunction(
      () =>
        document.querySelectorAll('.updraft-record [role=timer]').length &&
        (window as unknown as PageWindow).recordedBytes() > 0,
      undefined,
      30_000,
    )
    await sleep(1500)
    await press(page, 'Stop recording')
    await settled(page)
    const run = await recording(page)
    await expectStored(run)
    expect(run.size).toBeLessThanOrEqual(PART)
    expect(run.puts.map(({ part, status }) => ({ part, status }))).toEqual([{ part: 0, status: 200 }])
    expect(run.puts[0]!.size).toBe(run.size)
    expect(page.errors).toEqual([])
    await page.close()
  }, 120_000)

  it(`${BROWSER_LABELS[browser]}: Cancel after a part is stored ends the recording and aborts its upload: no object, the parts removed`, async () => {
    const page = await openPage({ videoBitsPerSecond: 12_000_000 })
    await page.click('.updraft-record button.updraft-primary')
    await page.waitForFunction(
      () => (window as unknown as PageWindow).puts.some((put) => put.part === 1 && put.status === 200),
      undefined,
      90_000,
    )
    const first = (await page.evaluate(() => (window as unknown as PageWindow).puts)).find((put) => put.part === 1)!
    const key = decodeURIComponent(new URL(first.url!).pathname.split('/').slice(2).join('/'))
    expect(await uploadExists(key, first.uploadId!)).toBe(true)
    await press(page, 'Cancel recording')
    await settled(page)
    const run = await recording(page)
    expect(run.state).toBe('cancelled')
    expect(run.key).toBeUndefined()
    await noCopyKept(page)
    // The abort runs in the background once the part requests have closed.
    const deadline = Date.now() + 30_000
    while ((await uploadExists(key, first.uploadId!)) && Date.now() < deadline) await sleep(250)
    expect(await uploadExists(key, first.uploadId!)).toBe(false)
    expect(page.errors).toEqual([])
    await page.close()
  }, 120_000)

  it(`${BROWSER_LABELS[browser]}: in token mode (RGW's STS: the page signs its own parts), parts leave while recording and Stop stores the chunks byte for byte, every part but the last 5 MiB`, async () => {
    const page = await openPage({ videoBitsPerSecond: 12_000_000, api: servedToken.api, strategy: 'token' })
    await page.click('.updraft-record button.updraft-primary')
    await page.waitForFunction(
      () => (window as unknown as PageWindow).puts.filter((put) => put.part > 0 && put.status === 200).length >= 2,
      undefined,
      120_000,
    )
    await press(page, 'Stop recording')
    await settled(page)
    const run = await recording(page)
    const stored = await expectStored(run)
    const parts = partsOf(run.puts)
    expect(parts.length).toBeGreaterThanOrEqual(3)
    expect(parts.map((put) => put.part)).toEqual(parts.map((_, index) => index + 1))
    expect(parts.slice(0, -1).every((put) => put.size === PART)).toBe(true)
    expect(parts.reduce((sum, put) => sum + put.size, 0)).toBe(stored.length)
    // Signed in the page with the token's credentials, not presigned by the upload API.
    expect(parts.every((put) => !new URL(put.url!).searchParams.has('X-Amz-Signature'))).toBe(true)
    expect(parts.filter((put) => put.end! < run.stopAt!).length).toBeGreaterThanOrEqual(2)
    await noCopyKept(page)
    expect(page.errors).toEqual([])
    await page.close()
  }, 180_000)

  it(`${BROWSER_LABELS[browser]}: a track that ends (the canvas track stopped) ends the recording, and what was recorded is stored`, async () => {
    const page = await openPage({ videoBitsPerSecond: 12_000_000 })
    await page.click('.updraft-record button.updraft-primary')
    await recordedAtLeast(page, PART + MiB)
    await page.evaluate(() => (window as unknown as PageWindow).canvasTrack().stop())
    await settled(page)
    const run = await recording(page)
    await expectStored(run)
    expect(partsOf(run.puts).length).toBeGreaterThanOrEqual(2)
    expect(run.text).toContain('ended when its source stopped')
    expect(page.errors).toEqual([])
    await page.close()
  }, 120_000)

  /**
   * Records at 12 Mbit/s (chunks every 2 s) until `partsStored` parts are stored, then closes the
   * tab right after a chunk reached the copy in the origin-private file system (so the next chunk
   * is ~2 s away: the log of chunks is every chunk the copy can hold), and opens the site again in
   * a new tab of the same context. What the first tab sent, and the chunks it recorded, come back.
   */
  async function closeMidRecording(partsStored: number, strategy: 'presigned' | 'token' = 'presigned') {
    const mode = { api: (strategy === 'token' ? servedToken : served).api, strategy }
    const first = await openPage({ videoBitsPerSecond: 12_000_000, timeslice: 2000, ...mode })
    await first.click('.updraft-record button.updraft-primary')
    await first.waitForFunction(
      (n) => (window as unknown as PageWindow).puts.filter((put) => put.part > 0 && put.status === 200).length >= n,
      partsStored,
      120_000,
    )
    const next = await first.newTab()
    const { chunks, kept, puts: sent } = await first.evaluate(() => (window as unknown as PageWindow).afterNextKept())
    await first.close()
    expect(first.errors).toEqual([])
    await next.goto(`${site.origin}/`)
    await next.waitForFunction(() => typeof (window as unknown as PageWindow).mount === 'function')
    await next.evaluate((props) => (window as unknown as PageWindow).mount(props), mode)
    await next.waitForFunction(() => document.querySelector('.updraft-record-unfinished') !== null, undefined, 30_000)
    const first1 = sent.find((put) => put.part === 1)!
    const key = decodeURIComponent(new URL(first1.url!).pathname.split('/').slice(2).join('/'))
    return { next, chunks, kept, sent, key, uploadId: first1.uploadId! }
  }

  it.each(['presigned', 'token'] as const)(
    `${BROWSER_LABELS[browser]}, %s: a tab closed mid-recording (≥ 2 parts sent) is finished in the next tab: byte-identical to the chunks recorded, the stored parts not sent again, equal parts but the last, no upload left on the key`,
    async (strategy) => {
      const { next, chunks, kept, sent, key, uploadId } = await closeMidRecording(2, strategy)
      const banner = await next.evaluate(() => document.querySelector('.updraft-record-unfinished')!.textContent)
      expect(banner).toMatch(/A recording was interrupted \([\d.]+ MiB kept in this browser/)
      expect(await next.evaluate(() => (window as unknown as PageWindow).keptFolders())).toHaveLength(1)
      const keptChunks = await next.evaluate(() => (window as unknown as PageWindow).keptChunks())
      // What storage holds of the upload the first tab left (a part it sent as it closed included).
      const { Parts: onStorage = [] } = await client.send(
        new ListPartsCommand({ Bucket: rgw.bucket, Key: key, UploadId: uploadId }),
      )
      await next.evaluate(() =>
        [...document.querySelectorAll<HTMLButtonElement>('.updraft-record-unfinished button')]
          .find((button) => button.textContent === 'Finish uploading')!
          .click(),
      )
      await settled(next)
      const run = await recording(next)
      expect(run.error, run.text).toBeUndefined()
      expect(run.state).toBe('done')
      expect(run.key).toBe(key)
      const stored = await readObject(client, rgw.bucket, key)

      // The stored object is the copy, and the copy is the chunks recorded, in order: the chunks the
      // first tab had seen when it was closed (the log), all of them but at most the last (its write
      // to the copy may be cut), then whatever the recorder handed over as the tab closed (Chromium
      // does, up to two chunks here; the log, taken just before, cannot hold them: their bytes are
      // compared with the copy's only).
      let at = 0
      keptChunks.forEach((chunk, n) => {
        expect(sha256(stored.subarray(at, at + chunk.size)), `chunk ${n + 1}`).toBe(chunk.sha256)
        if (n < chunks.length) expect(chunk, `chunk ${n + 1}`).toEqual(chunks[n])
        at += chunk.size
      })
      expect(at).toBe(stored.length)
      expect(keptChunks.length).toBeGreaterThanOrEqual(Math.max(kept, chunks.length - 1))
      console.log(
        `[recording] ${BROWSER_LABELS[browser]}, ${strategy}: closed with ${chunks.length} chunks seen (${kept} kept at the last look); stored ${keptChunks.length} chunks (${keptChunks.length - chunks.length} handed over as the tab closed), ${stored.length} B`,
      )

      // Parts: those on storage when the next tab came are not sent again; every part but the last is 5 MiB.
      expect(sent.filter((put) => put.part > 0 && put.status === 200).length).toBeGreaterThanOrEqual(2)
      expect(onStorage.length).toBeGreaterThanOrEqual(2)
      expect(onStorage.every((part) => part.Size === PART)).toBe(true)
      const resent = run.puts.filter((put) => onStorage.some((part) => part.PartNumber === put.part))
      expect(resent).toEqual([])
      expect(run.puts.every((put) => put.uploadId === uploadId)).toBe(true)
      const sizes = new Map<number, number>([
        ...onStorage.map((part): [number, number] => [part.PartNumber!, part.Size!]),
        ...partsOf(run.puts).map((put): [number, number] => [put.part, put.size]),
      ])
      const count = Math.ceil(stored.length / PART)
      expect([...sizes.keys()].sort((a, b) => a - b)).toEqual(Array.from({ length: count }, (_, i) => i + 1))
      for (let n = 1; n < count; n++) expect(sizes.get(n), `part ${n}`).toBe(PART)
      expect(sizes.get(count)).toBe(stored.length - (count - 1) * PART)
      const head = await client.send(new HeadObjectCommand({ Bucket: rgw.bucket, Key: key }))
      expect(head.ContentLength).toBe(stored.length)
      expect(head.ContentType).toBe('video/webm')
      const { Uploads = [] } = await client.send(new ListMultipartUploadsCommand({ Bucket: rgw.bucket, Prefix: key }))
      expect(Uploads).toEqual([])
      // The copy is deleted once the upload is stored and verified; the banner is gone.
      await noCopyKept(next)
      expect(await next.evaluate(() => document.querySelector('.updraft-record-unfinished'))).toBeNull()
      expect(next.errors).toEqual([])
      await next.close()
    },
    300_000,
  )

  it(`${BROWSER_LABELS[browser]}: Discard of a recording a closed tab left aborts its upload and deletes the copy`, async () => {
    const { next, key, uploadId } = await closeMidRecording(1)
    expect(await uploadExists(key, uploadId)).toBe(true)
    await next.evaluate(() =>
      [...document.querySelectorAll<HTMLButtonElement>('.updraft-record-unfinished button')]
        .find((button) => button.textContent === 'Discard')!
        .click(),
    )
    await next.waitForFunction(() => document.querySelector('.updraft-record-unfinished') === null, undefined, 30_000)
    expect(await uploadExists(key, uploadId)).toBe(false)
    await noCopyKept(next)
    expect(next.errors).toEqual([])
    await next.close()
  }, 300_000)

  it(`${BROWSER_LABELS[browser]}: without an origin-private file system (getDirectory stubbed away) a recording goes as before, and nothing is kept`, async () => {
    const page = await session.newPage()
    await page.goto(`${site.origin}/`)
    await page.waitForFunction(() => typeof (window as unknown as PageWindow).mount === 'function')
    await page.evaluate(() => {
      delete (StorageManager.prototype as Partial<StorageManager>).getDirectory
    })
    expect(await page.evaluate(() => typeof navigator.storage.getDirectory)).toBe('undefined')
    await page.evaluate((props) => (window as unknown as PageWindow).mount(props), {
      api: served.api,
      strategy: 'presigned',
      videoBitsPerSecond: 12_000_000,
    })
    await page.click('.updraft-record button.updraft-primary')
    await recordedAtLeast(page, PART + MiB)
    await noCopyKept(page)
    await press(page, 'Stop recording')
    await settled(page)
    const run = await recording(page)
    await expectStored(run)
    expect(partsOf(run.puts).length).toBeGreaterThanOrEqual(2)
    await noCopyKept(page)
    expect(page.errors).toEqual([])
    await page.close()
  }, 120_000)
})

/** Whether RGW still holds the multipart upload `uploadId` of `key` (RGW 16.2 answers an aborted one's ListParts with NoSuchKey; S3 says NoSuchUpload). */
async function uploadExists(key: string, uploadId: string): Promise<boolean> {
  try {
    await client.send(new ListPartsCommand({ Bucket: rgw.bucket, Key: key, UploadId: uploadId }))
    return true
  } catch (error) {
    if (['NoSuchUpload', 'NoSuchKey'].includes((error as Error).name)) return false
    throw error
  }
}

/**
 * The test page: `<RecordButton>` recording a canvas of noise and an oscillator, every PUT logged,
 * the chunks kept, the moments of the Stop click and of the stored result noted.
 */
async function bundleRecordPage(): Promise<string> {
  const { code } = await bundleForBrowser({
    react: true,
    contents: `
        import { createElement as h } from 'react'
        import { createRoot } from 'react-dom/client'
        import { RecordButton } from './src/recording/index.ts'

        const puts = (window.puts = [])
        const open = XMLHttpRequest.prototype.open
        const send = XMLHttpRequest.prototype.send
        XMLHttpRequest.prototype.open = function (method, url, ...rest) {
          this.__request = { method, url: String(url) }
          return open.call(this, method, url, ...rest)
        }
        XMLHttpRequest.prototype.send = function (body) {
          const { method, url } = this.__request
          if (method === 'POST') {
            const post = { path: new URL(url).pathname, start: performance.now() }
            ;(window.posts ??= []).push(post)
            this.addEventListener('loadend', () => Object.assign(post, { status: this.status, end: performance.now() }))
          }
          if (method === 'PUT') {
            const put = { part: Number(new URL(url).searchParams.get('partNumber') ?? 0), uploadId: new URL(url).searchParams.get('uploadId') ?? undefined, size: body?.size ?? body?.byteLength ?? 0, start: performance.now() }
            put.url = url
            puts.push(put)
            this.addEventListener('loadend', () => Object.assign(put, { status: this.status, end: performance.now() }))
          }
          return send.call(this, body)
        }

        let canvasTrack
        function noise() {
          const canvas = document.createElement('canvas')
          canvas.width = 480
          canvas.height = 360
          const context = canvas.getContext('2d')
          const frame = context.createImageData(canvas.width, canvas.height)
          const draw = () => {
            for (let at = 0; at < frame.data.length; at += 65536) crypto.getRandomValues(frame.data.subarray(at, at + 65536))
            context.putImageData(frame, 0, 0)
          }
          draw()
          setInterval(draw, 33)
          const media = canvas.captureStream(30)
          canvasTrack = media.getVideoTracks()[0]
          const audio = new AudioContext()
          const tone = audio.createOscillator()
          const out = audio.createMediaStreamDestination()
          tone.connect(out)
          tone.start()
          void audio.resume()
          media.addTrack(out.stream.getAudioTracks()[0])
          return media
        }

        const chunks = []
        const hashes = []
        let recorded = 0
        let stopAt, settledAt, lastChunkAt, key
        document.addEventListener('click', (event) => {
          if (event.target.closest('[aria-label="Stop recording"]')) stopAt = performance.now()
        }, true)
        const hex = async (blob) =>
          [...new Uint8Array(await crypto.subtle.digest('SHA-256', await blob.arrayBuffer()))].map((b) => b.toString(16).padStart(2, '0')).join('')
        // The real one, kept before a test stubs it away (a browser without OPFS).
        const getDirectory = navigator.storage.getDirectory?.bind(navigator.storage)
        const recordingsFolder = async () => (await getDirectory()).getDirectoryHandle('updraft-recordings').catch(() => undefined)
        window.keptFolders = async () => {
          const folder = await recordingsFolder()
          const names = []
          if (folder) for await (const name of folder.keys()) names.push(name)
          return names
        }
        const keptCount = async () => {
          let count = 0
          const folder = await recordingsFolder()
          if (folder) for await (const dir of folder.values()) {
            for (let n = 1; ; n++) {
              const file = await dir.getFileHandle(String(n)).then((handle) => handle.getFile()).catch(() => undefined)
              if (!file?.size) break
              count++
            }
          }
          return count
        }
        // The chunk files of the one recording kept, in order (as kept-copy.ts writes them: 1, 2, 3…).
        window.keptChunks = async () => {
          const folder = await recordingsFolder()
          const kept = []
          if (folder) for await (const dir of folder.values()) {
            for (let n = 1; ; n++) {
              const file = await dir.getFileHandle(String(n)).then((handle) => handle.getFile()).catch(() => undefined)
              if (!file?.size) break
              kept.push({ size: file.size, sha256: await hex(file) })
            }
          }
          return kept
        }
        window.afterNextKept = async () => {
          const before = await keptCount()
          let kept
          while ((kept = await keptCount()) <= before) await new Promise((resolve) => setTimeout(resolve, 20))
          // Hashed as they came (onChunk): the tab is closed at once after this.
          return { chunks: await Promise.all(hashes), kept, puts }
        }
        window.recordedBytes = () => recorded
        window.canvasTrack = () => canvasTrack
        window.mount = (props) => {
          createRoot(document.getElementById('app')).render(h(RecordButton, {
            ...props,
            source: noise,
            onChunk: (chunk) => { chunks.push(chunk); hashes.push(hex(chunk).then((sha256) => ({ size: chunk.size, sha256 }))); recorded += chunk.size; lastChunkAt = performance.now() },
            onUploadComplete: (result) => { settledAt = performance.now(); key = result.key },
          }))
        }
        window.recording = async () => {
          const bytes = new Uint8Array(await new Blob(chunks).arrayBuffer())
          const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes))
          const root = document.querySelector('.updraft-record')
          return {
            state: root.dataset.state,
            chunks: chunks.length,
            size: bytes.length,
            sha256: [...digest].map((b) => b.toString(16).padStart(2, '0')).join(''),
            key,
            error: root.querySelector('[role=alert]')?.textContent ?? undefined,
            puts,
            stopAt,
            lastChunkAt,
            settledAt,
            text: root.textContent,
          }
        }`,
  })
  return code
}
