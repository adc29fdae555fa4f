// The checksum opt-in in real Chromium, cross-origin to Ceph RGW: each part is hashed in the
// opt-in's worker (CRC32C, MD5, SHA-256 through WebCrypto), never on the page's main thread; the
// headers pass the bucket's CORS preflight; a part damaged on the way is refused and sent again;
// a page whose CSP forbids blob: workers hashes on its main thread instead; the object reads back
// byte-exact every time.
import { randomUUID } from 'node:crypto'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { type FaultProxy, startFaultProxy } from '../dev/fault-proxy.ts'
import { readObject, sdkClient, sha256 } from '../dev/s3-client.ts'
import type * as Engine from '../engine/index.ts'
import type * as Checksums from '../engine/opt-ins/checksums/index.ts'
import { IDLE_MS } from '../engine/opt-ins/checksums/off-thread.ts'
import { bundleForBrowser } from './helpers/engine-bundle.ts'
import { type EnginePage, type EnginePageIn, openEnginePage, openEnginePageIn } from './helpers/engine-page.ts'
import { type StaticServer, startStaticServer } from './helpers/static-server.ts'

const rgw = inject('rgw')
const admin = sdkClient(rgw)
const MiB = 1024 * 1024
let engine: EnginePage
let proxy: FaultProxy
/** Flip a byte of the next attempt at this part number (through the proxy). */
let damagePart: number | undefined

/** What the page's hashing did, seen from outside the engine: worker constructions, digests the workers answered, terminations, main-thread SHA-256s of a body's size, CSP violations. */
interface Hashing {
  created: number
  /** The most workers alive at once. */
  mostAlive: number
  answered: number
  terminated: number
  mainThreadBodyDigests: number
  violations: string[]
}

/** Wraps the page's Worker and crypto.subtle.digest before any upload: the engine is not changed to be observed. */
const observeHashing = (page: Page) =>
  page.evaluate(() => {
    const hashing: Hashing = {
      created: 0,
      mostAlive: 0,
      answered: 0,
      terminated: 0,
      mainThreadBodyDigests: 0,
      violations: [],
    }
    Object.assign(window, { hashing })
    const NativeWorker = Worker
    window.Worker = class extends NativeWorker {
      constructor(url: string | URL, options?: WorkerOptions) {
        hashing.created++
        hashing.mostAlive = Math.max(hashing.mostAlive, hashing.created - hashing.terminated)
        super(url, options)
        this.addEventListener('message', (event: MessageEvent) => void (event.data?.digest && hashing.answered++))
      }
      override terminate() {
        hashing.terminated++
        super.terminate()
      }
    }
    const nativeDigest = crypto.subtle.digest.bind(crypto.subtle)
    crypto.subtle.digest = (algorithm: AlgorithmIdentifier, data: BufferSource) => {
      if (data.byteLength >= 64 * 1024) hashing.mainThreadBodyDigests++
      return nativeDigest(algorithm, data)
    }
    document.addEventListener('securitypolicyviolation', (event) => hashing.violations.push(event.effectiveDirective))
  })

const hashingOf = (page: Page) => page.evaluate(() => ({ ...(window as unknown as { hashing: Hashing }).hashing }))

beforeAll(async () => {
  proxy = await startFaultProxy({
    target: rgw.endpoint,
    kind: 'storage',
    decide: ({ step, url }) => {
      if (step !== 'PUT ?partNumber' || damagePart === undefined || !url.includes(`partNumber=${damagePart}&`))
        return undefined
      damagePart = undefined
      return 'flip-byte'
    },
  })
  // The engine with the checksum opt-in's own entry, as a page that imports both ships them.
  engine = await openEnginePage(
    bundleForBrowser({
      contents: `export * from './engine/index.ts'; export { checksum } from './engine/opt-ins/checksums/index.ts'`,
    }),
  )
  await observeHashing(engine.page)
})
afterAll(async () => {
  await engine?.close()
  await proxy?.stop()
  admin.destroy()
})

interface Job {
  target: { endpoint: string; region: string; bucket: string; key: string; credentials: Engine.Credentials }
  size: number
  algorithm: Checksums.ChecksumAlgorithm
}

const targetFor = (key: string, endpoint = rgw.endpoint) => ({
  endpoint,
  region: rgw.region,
  bucket: rgw.bucket,
  key,
  credentials: rgw.credentials,
})

const uploadInPage = (page: Page, job: Job) =>
  page.evaluate(async ({ target, size, algorithm }: Job) => {
    const { updraft } = window as unknown as { updraft: typeof Engine & typeof Checksums }
    const bytes = new Uint8Array(size)
    for (let i = 0; i < size; i += 65536) crypto.getRandomValues(bytes.subarray(i, i + 65536))
    // The test's own digest of the whole body, before the counting starts.
    const sha256 = Array.from(new Uint8Array(await crypto.subtle.digest('SHA-256', bytes)), (b) =>
      b.toString(16).padStart(2, '0'),
    ).join('')
    const headers: string[] = []
    const retried: string[] = []
    const { setRequestHeader } = XMLHttpRequest.prototype
    XMLHttpRequest.prototype.setRequestHeader = function (this: XMLHttpRequest, name: string, value: string) {
      headers.push(name)
      return setRequestHeader.call(this, name, value)
    }
    const { hashing } = window as unknown as { hashing: Hashing }
    const before = { ...hashing }
    try {
      await updraft.uploadObject(new Blob([bytes]), {
        ...target,
        forcePathStyle: true,
        retry: { delay: 1 },
        onRetry: ({ error }) => void retried.push((error as { code?: string }).code ?? (error as Error).name),
        ...updraft.checksum(algorithm),
      })
      return {
        sha256,
        headers,
        retried,
        answered: hashing.answered - before.answered,
        mainThreadBodyDigests: hashing.mainThreadBodyDigests - before.mainThreadBodyDigests,
      }
    } catch (error) {
      return { error: `${(error as Error).name}: ${(error as Error).message}`, headers, retried }
    } finally {
      XMLHttpRequest.prototype.setRequestHeader = setRequestHeader
    }
  }, job)

describe('checksums in Chromium, cross-origin to Ceph RGW, hashed in a worker', () => {
  for (const algorithm of ['md5', 'crc32c', 'sha256'] as const) {
    it(`${algorithm}: single PUT and multipart (11 MiB, 5 MiB parts), every body hashed by the worker, read back byte-exact`, async () => {
      for (const [size, bodies] of [
        [70_001, 1],
        [11 * MiB, 3],
      ] as const) {
        const key = `browser-checksums/${algorithm}-${size}-${randomUUID()}.bin`
        const outcome = await uploadInPage(engine.page, { target: targetFor(key), size, algorithm })
        expect(outcome.error).toBeUndefined()
        expect(outcome.headers).toContain(algorithm === 'md5' ? 'content-md5' : `x-amz-checksum-${algorithm}`)
        expect(outcome.headers).not.toContain('x-amz-sdk-checksum-algorithm')
        // One digest from a worker per body; none of a body's size on the main thread (WebCrypto's included).
        expect(outcome.answered).toBe(bodies)
        expect(outcome.mainThreadBodyDigests).toBe(0)
        expect(sha256(await readObject(admin, rgw.bucket, key))).toBe(outcome.sha256)
      }
    })
  }

  it('the page has at most two workers, terminated when idle and started again by the next upload', async () => {
    const seen = await hashingOf(engine.page)
    expect(seen.created).toBeGreaterThanOrEqual(1)
    // At once, not in all: the earlier tests' workers may have idled out and been started again
    // between uploads on a slow machine.
    expect(seen.mostAlive).toBeGreaterThanOrEqual(1)
    expect(seen.mostAlive).toBeLessThanOrEqual(2)
    await expect
      .poll(async () => (await hashingOf(engine.page)).terminated, { timeout: IDLE_MS + 5000, interval: 250 })
      .toBe(seen.created)
    // The next upload starts a worker again.
    const key = `browser-checksums/after-idle-${randomUUID()}.bin`
    const outcome = await uploadInPage(engine.page, { target: targetFor(key), size: 6 * MiB, algorithm: 'md5' })
    expect(outcome.answered).toBe(2)
    expect((await hashingOf(engine.page)).created).toBeGreaterThan(seen.created)
    expect(sha256(await readObject(admin, rgw.bucket, key))).toBe(outcome.sha256)
  })

  it('md5: a part damaged on the way is refused (BadDigest) and sent again with the same digest, read back byte-exact', async () => {
    const key = `browser-checksums/flipped-${randomUUID()}.bin`
    damagePart = 2
    const outcome = await uploadInPage(engine.page, {
      target: targetFor(key, proxy.url),
      size: 11 * MiB,
      algorithm: 'md5',
    })
    expect(damagePart).toBeUndefined()
    expect(outcome.error).toBeUndefined()
    expect(outcome.retried).toEqual(['BadDigest'])
    // Hashed once per part, in the worker: the retry re-sends the digest it had.
    expect(outcome.answered).toBe(3)
    expect(sha256(await readObject(admin, rgw.bucket, key))).toBe(outcome.sha256)
  })
})

// Firefox ESR: the worker made from the opt-in's own code (a Blob URL) hashes there too. One
// algorithm per kind (MD5's Content-MD5, a CRC's x-amz-checksum-*) and the damaged part: the other
// algorithms and the idle and CSP cases share the code above and run in Chromium only.
describe('checksums in Firefox ESR, cross-origin to Ceph RGW, hashed in a worker', () => {
  let firefox: EnginePageIn
  // uploadInPage and observeHashing only call evaluate, which both drivers share.
  const page = () => firefox.page as unknown as Page
  beforeAll(async () => {
    firefox = await openEnginePageIn(
      'firefox',
      bundleForBrowser({
        contents: `export * from './engine/index.ts'; export { checksum } from './engine/opt-ins/checksums/index.ts'`,
      }),
    )
    await observeHashing(page())
  })
  afterAll(() => firefox?.close())

  for (const algorithm of ['md5', 'crc32c'] as const) {
    it(`${algorithm}: multipart (11 MiB, 5 MiB parts), every body hashed by the worker, none on the main thread, read back byte-exact`, async () => {
      const key = `browser-checksums/firefox-${algorithm}-${randomUUID()}.bin`
      const outcome = await uploadInPage(page(), { target: targetFor(key), size: 11 * MiB, algorithm })
      expect(outcome.error).toBeUndefined()
      expect(outcome.headers).toContain(algorithm === 'md5' ? 'content-md5' : `x-amz-checksum-${algorithm}`)
      expect(outcome.answered).toBe(3)
      expect(outcome.mainThreadBodyDigests).toBe(0)
      expect(sha256(await readObject(admin, rgw.bucket, key))).toBe(outcome.sha256)
    })
  }

  it('md5: a part damaged on the way is refused (BadDigest) and sent again, read back byte-exact', async () => {
    const key = `browser-checksums/firefox-flipped-${randomUUID()}.bin`
    damagePart = 2
    const outcome = await uploadInPage(page(), { target: targetFor(key, proxy.url), size: 11 * MiB, algorithm: 'md5' })
    expect(damagePart).toBeUndefined()
    expect(outcome.error).toBeUndefined()
    expect(outcome.retried).toEqual(['BadDigest'])
    expect(sha256(await readObject(admin, rgw.bucket, key))).toBe(outcome.sha256)
  })
})

describe("a page whose CSP forbids blob: workers (worker-src 'self')", () => {
  let site: StaticServer
  let page: Page

  beforeAll(async () => {
    const html = `<!doctype html><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="worker-src 'self'">
<title>updraft, no blob: workers</title><script type="module">import * as updraft from '/engine.js'; window.updraft = updraft</script>`
    site = await startStaticServer({
      '/': { type: 'text/html; charset=utf-8', body: html },
      '/engine.js': { type: 'text/javascript; charset=utf-8', body: engine.bundle.code },
    })
    page = await engine.page.context().newPage()
    await page.goto(`${site.origin}/`)
    await page.waitForFunction(() => 'updraft' in window)
    await observeHashing(page)
  })
  afterAll(async () => {
    await page?.close()
    await site?.close()
  })

  it('the refused worker leads to hashing on the main thread, not a hang: md5 and sha256 multipart read back byte-exact', async () => {
    const created: number[] = []
    for (const algorithm of ['md5', 'sha256'] as const) {
      const key = `browser-checksums/csp-${algorithm}-${randomUUID()}.bin`
      const outcome = await uploadInPage(page, { target: targetFor(key), size: 11 * MiB, algorithm })
      expect(outcome.error).toBeUndefined()
      expect(outcome.answered).toBe(0)
      expect(sha256(await readObject(admin, rgw.bucket, key))).toBe(outcome.sha256)
      created.push((await hashingOf(page)).created)
    }
    expect((await hashingOf(page)).violations).toContain('worker-src')
    // Tried by the first upload only (its first parts, before the refusal arrived, up to the two
    // workers a page has): after the refusal the page hashes in place without asking again.
    expect(created[0]).toBeGreaterThanOrEqual(1)
    expect(created[0]).toBeLessThanOrEqual(2)
    expect(created[1]).toBe(created[0])
  })
})
