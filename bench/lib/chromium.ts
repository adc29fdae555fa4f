import { readdirSync, readFileSync } from 'node:fs'
import { Agent, createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join, relative } from 'node:path'
import { type BuildOptions, build } from 'esbuild'
import type { CDPSession } from 'playwright-core'
import { chromium as playwright } from 'playwright-core'
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../../dev/launch-chromium.ts'
import { objectUrl } from '../../protocol/object-url.ts'
import { createPresigner } from '../../server/presigner.ts'
import { BENCH_DIR, type UploadTarget } from './child.ts'

export type PageContender = 'updraft' | 'raw-xhr' | 'lib-storage' | 'updraft-token' | 'updraft-presigned' | 'uppy'

export interface PageJob {
  contender: PageContender
  target: UploadTarget
  size: number
  partSize: number
  queueSize: number
  /** Upload this file, picked through the page's `<input type=file>` (a file-backed Blob), instead of generating `size` bytes. */
  file?: string
  /** raw-xhr only: the multipart upload is created and every URL presigned before the page starts. */
  raw?: { partUrls: string[]; completeUrl: string }
  /** updraft only: per-part checksums (`updraft-s3/checksums`). */
  checksum?: 'crc32' | 'crc32c' | 'sha256' | 'md5'
  /** updraft with `checksum` only: `main` hides `Worker` from the page, so the parts are hashed on its main thread (the fallback). */
  checksumThread?: 'worker' | 'main'
  /**
   * Load the contender's code-split build (esbuild `splitting`: lazy chunks are files of their own,
   * fetched when first imported, as a page's bundler ships them) instead of its one-file bundle
   * (where esbuild inlines every dynamic import). Needs `splitContenders` at start.
   */
  split?: boolean
  /** Report what the page fetched while uploading, from its Resource Timing entries (`PageResult.resources`). */
  resourceTimings?: boolean
}

export interface PageResult {
  /** The longest the page's main thread could not run a timer during the upload (a frame is 16.7 ms). */
  longestStallMs?: number
  seconds: number
  bytes: number
  /** Wall-clock time the upload started, ms since the epoch. */
  startedAt: number
  /** With `resourceTimings`: every fetch the page started after calling the upload, in order. */
  resources?: PageResource[]
}

/** One Resource Timing entry, in ms after the page called the upload (the page's own clock). */
export interface PageResource {
  url: string
  startMs: number
  /** `responseEnd`: its last byte received. */
  endMs: number
}

export interface ChromiumBenchOptions {
  /**
   * Where the page's same-origin `/api/s3-upload…` requests go (the harness forwards them, Host
   * kept, over one warm keep-alive connection: a page's connection to its own origin is open
   * before it uploads). Needed by the upload API contenders.
   */
  apiUpstream?: string
  /**
   * Where pages are opened from, given the harness's own origin: e.g. a link proxy in front of it
   * (bench/lib/link.ts), so the page, its scripts and its same-origin API requests all cross the
   * link, as a real site's do. @default the harness's origin, on loopback
   */
  site?: (origin: string) => Promise<string>
  /** Contenders to build code-split as well, for jobs with `split`. @default none */
  splitContenders?: PageContender[]
  /** Sample every Chromium process's RSS while uploading (20 ms): off where only timing is wanted. @default true */
  sampleMemory?: boolean
}

export interface PageMeasurement extends PageResult {
  /** Summed RSS of every Chromium process when the Blob was made and the page was idle. */
  idleRss: number
  /** Highest summed RSS seen while uploading (sampled every 20 ms). */
  peakRss: number
  /** Per Chromium process (browser, renderer, network, ...): RSS when idle and its own highest while uploading. */
  processes: Array<{ kind: string; idleRss: number; peakRss: number }>
}

export interface ChromiumBench {
  run(job: PageJob): Promise<PageMeasurement>
  close(): Promise<void>
}

const SCRIPTS: Record<PageContender, string> = {
  updraft: 'browser-updraft.ts',
  'raw-xhr': 'browser-raw-xhr.ts',
  'lib-storage': 'browser-lib-storage.ts',
  'updraft-token': 'browser-updraft-api.ts',
  'updraft-presigned': 'browser-updraft-api.ts',
  uppy: 'browser-uppy.ts',
}

const PAGE_BUILD = {
  bundle: true as const,
  format: 'esm' as const,
  platform: 'browser' as const,
  target: 'es2022',
  minify: true,
  write: false as const,
  logLevel: 'error' as const,
  // lib-storage's browser build pulls Node polyfills (buffer, stream-browserify).
  define: { global: 'globalThis', 'process.env.NODE_DEBUG': 'false', 'process.env.NODE_ENV': '"production"' },
  inject: [join(BENCH_DIR, 'clients', 'browser-process-shim.ts')],
} satisfies BuildOptions

/** One bundle per contender, so a page holds only its own contender's code. */
async function bundlePages(): Promise<Record<PageContender, string>> {
  const entries = await Promise.all(
    Object.entries(SCRIPTS).map(async ([name, file]) => {
      const result = await build({ ...PAGE_BUILD, entryPoints: [join(BENCH_DIR, 'clients', file)] })
      return [name, result.outputFiles[0]!.text] as const
    }),
  )
  return Object.fromEntries(entries) as Record<PageContender, string>
}

/**
 * `contenders` built as a page's bundler ships code-split code: `/split/CONTENDER/entry.js` and the
 * chunks it imports, statically (shared code) or dynamically (lazy chunks), beside it.
 */
async function splitPages(contenders: readonly PageContender[]): Promise<Map<string, string>> {
  const files = new Map<string, string>()
  for (const contender of contenders) {
    const outdir = join(BENCH_DIR, '.cache', 'split', contender)
    const result = await build({
      ...PAGE_BUILD,
      entryPoints: { entry: join(BENCH_DIR, 'clients', SCRIPTS[contender]) },
      splitting: true,
      outdir,
    })
    for (const file of result.outputFiles) files.set(`/split/${contender}/${relative(outdir, file.path)}`, file.text)
  }
  return files
}

const PAGE = `<!doctype html><meta charset="utf-8"><title>updraft bench</title><input type="file" id="file">
<script type="module">const id = new URLSearchParams(location.search).get('id');
const job = await (await fetch('/job?id=' + id)).json();
await import(job.split ? '/split/' + job.contender + '/entry.js' : '/' + job.contender + '.js')</script>`

/**
 * Chromium with each measurement in a fresh page (and renderer) that DevTools does not monitor:
 * the target is created over raw CDP in a browser context Playwright does not know, so Playwright
 * detaches from it instead of enabling its Network domain. The page talks to this harness over
 * HTTP only.
 */
export async function startChromiumBench({
  apiUpstream,
  site,
  splitContenders = [],
  sampleMemory = true,
}: ChromiumBenchOptions = {}): Promise<ChromiumBench> {
  const scripts = await bundlePages()
  const split = await splitPages(splitContenders)
  const forward = apiUpstream ? forwarder(apiUpstream) : undefined
  const jobs = new Map<
    string,
    { job: PageJob; ready: (release: () => void) => void; done: (result: PageResult | { error: string }) => void }
  >()
  let nextId = 1

  const server = createServer(async (request, response) => {
    const url = new URL(request.url ?? '/', 'http://bench')
    const entry = jobs.get(url.searchParams.get('id') ?? '')
    const send = (type: string, body: string) =>
      response.writeHead(200, { 'content-type': type, 'cache-control': 'no-store' }).end(body)
    if (forward && url.pathname.startsWith('/api/')) return forward(request, response)
    if (url.pathname === '/') return send('text/html; charset=utf-8', PAGE)
    const script = /^\/(.+)\.js$/.exec(url.pathname)?.[1] as PageContender | undefined
    const code = split.get(url.pathname) ?? (script && scripts[script])
    if (code) return send('text/javascript', code)
    if (!entry) return response.writeHead(404).end()
    if (url.pathname === '/job') return send('application/json', JSON.stringify(entry.job))
    if (url.pathname === '/ready') return entry.ready(() => send('text/plain', 'go'))
    if (url.pathname === '/result') {
      entry.done(JSON.parse(await readText(request)))
      return send('text/plain', 'ok')
    }
    response.writeHead(404).end()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const own = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const origin = site ? await site(own) : own

  // The tests' flags, plus a `gc()` the page calls before its idle baseline, so garbage left from
  // setting up does not make one measurement's growth look smaller than another's.
  const browser = await playwright.launch({
    executablePath: CHROMIUM_PATH,
    args: [...CHROMIUM_ARGS, '--js-flags=--expose-gc'],
  })
  const cdp = await browser.newBrowserCDPSession()

  return {
    async run(job) {
      const id = String(nextId++)
      if (job.contender === 'raw-xhr') job = { ...job, raw: await presignRaw(job) }
      if (job.split && !splitContenders.includes(job.contender))
        throw new Error(`${job.contender}: not built code-split (splitContenders)`)
      let idleRss = 0
      let peakRss = 0
      let sampler: NodeJS.Timeout | undefined
      const perProcess = new Map<number, { idleRss: number; peakRss: number }>()
      const sample = (pids: number[]) => {
        let total = 0
        for (const pid of pids) {
          const rss = rssOf([pid])
          total += rss
          const seen = perProcess.get(pid)
          if (seen) seen.peakRss = Math.max(seen.peakRss, rss)
          else perProcess.set(pid, { idleRss: rss, peakRss: rss })
        }
        return total
      }
      const outcome = new Promise<PageResult | { error: string }>((resolve) => {
        jobs.set(id, {
          job,
          ready(release) {
            if (!sampleMemory) return release()
            // The process list is read once per second, the RSS of those processes every 20 ms:
            // scanning all of /proc that often would take CPU from the browser being measured.
            let pids = chromiumPids()
            let ticks = 0
            idleRss = peakRss = sample(pids)
            sampler = setInterval(() => {
              if (++ticks % 50 === 0) pids = chromiumPids()
              peakRss = Math.max(peakRss, sample(pids))
            }, 20)
            release()
          },
          done: resolve,
        })
      })
      const { browserContextId } = await cdp.send('Target.createBrowserContext', { disposeOnDetach: true })
      let targetId: string | undefined
      try {
        ;({ targetId } = await cdp.send('Target.createTarget', { url: `${origin}/?id=${id}`, browserContextId }))
        if (job.file) await pickFile(cdp, targetId, job.file)
        const result = await withTimeout(outcome, 600_000, `${job.contender} page`)
        if ('error' in result) throw new Error(`${job.contender} in Chromium: ${result.error}`)
        if (sampleMemory) peakRss = Math.max(peakRss, sample(chromiumPids()))
        const processes = [...perProcess].map(([pid, rss]) => ({ kind: processKind(pid), ...rss }))
        return { ...result, idleRss, peakRss, processes }
      } finally {
        clearInterval(sampler)
        jobs.delete(id)
        if (targetId) await cdp.send('Target.closeTarget', { targetId }).catch(() => {})
        await cdp.send('Target.disposeBrowserContext', { browserContextId }).catch(() => {})
      }
    },
    async close() {
      forward?.close()
      await cdp.detach().catch(() => {})
      await browser.close()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

/**
 * Sets the page's file input to `path`, as a user picking a file would: the page then holds a
 * file-backed Blob. DevTools attaches to the page just for this (DOM domain only, never Network)
 * and detaches before the upload starts. Non-flattened attach, because Playwright's CDPSession
 * only routes messages of its own session.
 */
async function pickFile(cdp: CDPSession, targetId: string, path: string) {
  const { sessionId } = await cdp.send('Target.attachToTarget', { targetId, flatten: false })
  let nextId = 1
  const pending = new Map<number, (reply: { result?: Record<string, unknown>; error?: { message: string } }) => void>()
  const onMessage = (event: { sessionId?: string; message: string }) => {
    if (event.sessionId !== sessionId) return
    const reply = JSON.parse(event.message) as {
      id?: number
      result?: Record<string, unknown>
      error?: { message: string }
    }
    if (reply.id !== undefined) pending.get(reply.id)?.(reply)
  }
  cdp.on('Target.receivedMessageFromTarget', onMessage)
  const call = async <T>(method: string, params: object = {}) => {
    const id = nextId++
    const reply = await new Promise<{ result?: Record<string, unknown>; error?: { message: string } }>((resolve) => {
      pending.set(id, resolve)
      void cdp.send('Target.sendMessageToTarget', { sessionId, message: JSON.stringify({ id, method, params }) })
    })
    pending.delete(id)
    if (reply.error) throw new Error(`${method}: ${reply.error.message}`)
    return reply.result as T
  }
  try {
    // The input is in the page's HTML: poll until the document that holds it has loaded.
    // The document can change between two calls while the page is still navigating: retry.
    for (let attempt = 0; ; attempt++) {
      try {
        const { root } = await call<{ root: { nodeId: number } }>('DOM.getDocument')
        const { nodeId } = await call<{ nodeId: number }>('DOM.querySelector', {
          nodeId: root.nodeId,
          selector: '#file',
        })
        if (nodeId) return void (await call('DOM.setFileInputFiles', { files: [path], nodeId }))
      } catch (error) {
        if (attempt > 200) throw error
      }
      if (attempt > 200) throw new Error('the page never showed its file input')
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
  } finally {
    cdp.off('Target.receivedMessageFromTarget', onMessage)
    await cdp.send('Target.detachFromTarget', { sessionId }).catch(() => {})
  }
}

/**
 * Forwards requests to `upstream` over one keep-alive connection, opened ahead (as a page's own
 * connection to its origin is), keeping Host so the upload API sees a same-origin request.
 */
function forwarder(upstream: string) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  const target = new URL(upstream)
  const forward = (request: IncomingMessage, response: ServerResponse) => {
    const outgoing = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        path: request.url,
        method: request.method,
        headers: request.headers,
        agent,
      },
      (incoming) => {
        response.writeHead(incoming.statusCode ?? 502, incoming.headers)
        incoming.pipe(response)
      },
    )
    outgoing.on('error', () => response.writeHead(502).end())
    request.pipe(outgoing)
  }
  // Open the connection now: a HEAD that nothing answers but a 404 or 405.
  httpRequest({ host: target.hostname, port: target.port, path: '/', method: 'HEAD', agent }, (incoming) =>
    incoming.resume(),
  ).end()
  return Object.assign(forward, { close: () => agent.destroy() })
}

/** Creates the multipart upload and presigns its part and Complete URLs, as a server would. */
async function presignRaw({ target, size, partSize }: PageJob): Promise<NonNullable<PageJob['raw']>> {
  const presign = createPresigner(target.credentials, target.region)
  const url = objectUrl({ ...target, forcePathStyle: true })
  const signed = (method: string, query: Record<string, string>) => presign({ method, url, query, expiresIn: 3600 })
  const created = await (await fetch(await signed('POST', { uploads: '' }), { method: 'POST' })).text()
  const uploadId = /<UploadId>([^<]+)<\/UploadId>/.exec(created)?.[1]
  if (!uploadId) throw new Error(`CreateMultipartUpload failed: ${created.slice(0, 300)}`)
  const count = Math.ceil(size / partSize)
  return {
    partUrls: await Promise.all(
      Array.from({ length: count }, (_, i) => signed('PUT', { partNumber: String(i + 1), uploadId })),
    ),
    completeUrl: await signed('POST', { uploadId }),
  }
}

/** The Chromium processes this process started (browser, zygotes, renderers, utilities). */
export function chromiumPids(): number[] {
  const parents = new Map<number, number>()
  const names = new Map<number, string>()
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      // pid (comm) state ppid ...: comm may hold spaces, so split after the last ')'.
      const close = stat.lastIndexOf(')')
      names.set(Number(entry), stat.slice(stat.indexOf('(') + 1, close))
      parents.set(Number(entry), Number(stat.slice(close + 2).split(' ')[1]))
    } catch {
      // The process ended meanwhile.
    }
  }
  const descends = (pid: number): boolean => {
    for (let p = parents.get(pid); p !== undefined && p > 1; p = parents.get(p)) if (p === process.pid) return true
    return false
  }
  return [...names].filter(([pid, name]) => /chrom/i.test(name) && descends(pid)).map(([pid]) => pid)
}

/** `browser`, `renderer`, `network`, `gpu-process`, ... from the process's command line. */
function processKind(pid: number): string {
  try {
    // Chromium rewrites its command line (setproctitle): arguments end up space-separated.
    const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split(/[\0 ]/)
    const type = args.find((arg) => arg.startsWith('--type='))?.slice(7)
    const sub = args.find((arg) => arg.startsWith('--utility-sub-type='))?.slice(19)
    return sub ? (sub.split('.').at(-1) ?? type ?? 'utility') : (type ?? 'browser')
  } catch {
    return 'ended'
  }
}

/** Sum of VmRSS over `pids`, in bytes (processes gone meanwhile count 0). */
export function rssOf(pids: readonly number[]): number {
  let total = 0
  for (const pid of pids) {
    try {
      total += Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024
    } catch {
      // Gone.
    }
  }
  return total
}

async function readText(request: IncomingMessage): Promise<string> {
  let text = ''
  for await (const chunk of request) text += chunk
  return text
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>(
    (_, reject) => (timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms)),
  )
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}
