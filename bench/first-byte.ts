import { startCountingProxy } from '../dev/counting-proxy.ts'
import { S3RVER_CREDENTIALS, startS3rver } from '../dev/s3rver.ts'
import { startService } from './lib/child.ts'
import { type ChromiumBench, type PageResource, startChromiumBench } from './lib/chromium.ts'
import { createLink, type LinkProfile, PROFILES } from './lib/link.ts'
import { type Benchmark, fixed, type Goal, MiB, median, ratio, rotate, type Table } from './lib/report.ts'

/**
 * Issue 32: the engine loads aws4fetch's signer and the multipart machinery lazily, each started
 * beside the upload request whose reply needs it (modes/token-mode.ts `tokenFields`, modes/presigned-mode.ts
 * `presignedFields`), so it should cost no latency. This measures that in Chromium: the engine
 * code-split as a page's bundler ships it, against the same engine in one file with nothing lazy.
 */
const CONTENDERS = [
  { id: 'lazy', split: true },
  { id: 'eager', split: false },
] as const
type ContenderId = (typeof CONTENDERS)[number]['id']

const MODES = [
  { page: 'updraft-token', name: 'token' },
  { page: 'updraft-presigned', name: 'presigned' },
] as const

const KiB = 1024
const PART_SIZE = 5 * MiB
const API_PATH = '/api/s3-upload'

/** Loopback, and the 30 ms link of bench/network.ts (100 Mbit/s up, 500 down). */
const NETWORKS: Array<{ name: string; profile?: LinkProfile }> = [
  { name: 'loopback' },
  { name: PROFILES.home!.name, profile: PROFILES.home },
]

/** The share of uploads whose chunks must be in before the API's reply for the goal. */
const IN_TIME = 0.9

interface Cell {
  mode: (typeof MODES)[number]
  size: number
}

interface Measurement {
  /** From `upload()` in the page to the first byte of a PUT's body at storage (page and proxy clocks, ms). */
  bodyMs: number
  /** From `upload()` to the page's first request to storage (its own clock: Resource Timing `startTime`). */
  sentMs: number
  /** From `upload()` until the page had the API's reply (`responseEnd`). */
  replyMs: number
  /** Chunks the page fetched after calling `upload()` (its lazy chunks), and when each was in. */
  chunks: Array<{ name: string; endMs: number }>
}

/** Issue 32: time to the first storage byte, lazy chunks against one file, in Chromium. */
export const firstByte: Benchmark = {
  name: 'first-byte',
  title: '8. Time to first storage byte (Chromium, lazy chunks vs one file)',
  async run({ quick, log }) {
    const rounds = quick ? 1 : Number(process.env.FIRST_BYTE_ROUNDS ?? 20)
    const sizes = quick ? [64 * KiB, 6 * MiB] : [64 * KiB, 11 * MiB]
    const cells: Cell[] = MODES.flatMap((mode) => sizes.map((size) => ({ mode, size })))
    const tables: Table[] = []
    const goals: Goal[] = []
    const headlines: string[] = []
    for (const network of NETWORKS) {
      const rig = await startRig(network.profile)
      const runs = new Map<string, Record<ContenderId, Measurement[]>>(
        cells.map((cell) => [cellKey(cell), { lazy: [], eager: [] }]),
      )
      try {
        // One untimed upload of each kind first: the upload API's SDK clients, s3rver and Chromium's
        // own first-use costs stay out of the figures (a site's server has long been warm).
        if (!quick) for (const cell of cells) for (const { split } of CONTENDERS) await rig.run(cell, split)
        for (let round = 0; round < rounds; round++) {
          for (const cell of rotate(cells, round)) {
            for (const { id, split } of rotate(CONTENDERS, round)) {
              const measured = await rig.run(cell, split)
              runs.get(cellKey(cell))![id].push(measured)
              const chunks = measured.chunks.map(({ name, endMs }) => `${name} in at ${fixed(endMs, 0)}`).join(', ')
              log(
                `${network.name} ${cellKey(cell)} ${id}: body byte at ${measured.bodyMs}, sent at ${fixed(measured.sentMs, 0)}, reply in at ${fixed(measured.replyMs, 0)}; chunks: ${chunks || 'none'}`,
              )
            }
          }
        }
      } finally {
        await rig.stop()
      }
      tables.push(firstByteTable(network.name, rounds, cells, runs), chunkTable(network.name, rounds, cells, runs))
      for (const cell of cells) goals.push(goalOf(network.name, cell, runs.get(cellKey(cell))!))
      const ratios = cells.map(
        (cell) => `${cellKey(cell)} ${ratio(pairedRatio(runs.get(cellKey(cell))!, (run) => run.bodyMs))}`,
      )
      const lazy = cells.flatMap((cell) => runs.get(cellKey(cell))!.lazy.filter((run) => run.chunks.length > 0))
      headlines.push(
        `First storage byte in Chromium, ${network.name}: lazy/eager ${ratios.join(', ')}; the lazy chunks were in before the API's reply in ${lazy.filter((run) => waitMs(run) === 0).length} of ${lazy.length} uploads that loaded any.`,
      )
    }
    return {
      tables,
      goals,
      headlines,
      notes: [
        `Lazy: the page's script (bench/clients/browser-updraft-api.ts: \`upload()\`, \`strategy\` named) built by esbuild with \`splitting: true\`, its chunks served as files of their own from the page's origin. Eager: the same script in one file (esbuild inlines dynamic imports without \`splitting\`). Both minified ESM for the browser.`,
        `First body byte: from \`upload()\` called in the page (\`Date.now()\`) to the first byte of a PUT's body reaching a proxy in front of s3rver (dev/counting-proxy.ts, \`Date.now()\`, the same machine's clock); only the page's requests pass it, the upload API reaches s3rver directly. First PUT sent: the page's own Resource Timing \`startTime\` of its first request to storage, which leaves once the PUT is signed (token mode: with the signer loaded) and the part loop runs (over one part: with the multipart chunk loaded); its CORS preflight and s3rver's reply to it lie between that and the body byte.`,
        `Chunks against the reply (Resource Timing in the lazy page): a chunk in after the API's reply is the only way loading lazily can delay the first byte, by at most the wait shown (the time from the reply to the last chunk's last byte; what the engine does with the reply meanwhile overlaps it). Presigned on one PUT loads no chunk in either contender: its row is the run's noise floor.`,
        `Stack: s3rver (it checks signatures), the STS stand-in (dev/sts-server.ts, GetFederationToken) handing out s3rver's key, and the upload API on Fastify (bench/clients/upload-api-server.ts), in processes of their own but s3rver. A file of one part is one PUT; over one part the upload API creates the multipart upload (token mode's \`createMultipart\`, as presigned mode's always); ${PART_SIZE / MiB} MiB parts, 4 in flight.`,
        `On the link (bench/lib/link.ts), the page's origin (its HTML, scripts and the same-origin \`${API_PATH}\`, which the harness forwards to the upload API) and storage both sit behind the one emulated link, as a real site's do; the upload API's own calls to STS and s3rver do not cross it. HTTP/1.1 without TLS, as the other browser benchmarks: no HTTP/2 multiplexing, so a chunk fetched while the API request is out takes another connection (idle since the page loaded, or opened then).`,
        `Each upload runs in a fresh page in a fresh browser context (cold connections to storage, an empty preflight cache) once the page has loaded and sat idle 0.5 s; contenders alternate within each round and cells rotate, ${rounds} round${rounds === 1 ? '' : 's'} ${quick ? 'without a warm-up (--quick)' : 'after one untimed warm-up upload of each'}. Ratios and differences are medians of same-round pairs; the 95% CI of the median difference is distribution-free (order statistics).`,
      ],
    }
  },
}

interface Rig {
  run(cell: Cell, split: boolean): Promise<Measurement>
  stop(): Promise<void>
}

/** s3rver behind a counting proxy, the STS stand-in, the upload API and Chromium; all behind `profile`'s link when given. */
async function startRig(profile: LinkProfile | undefined): Promise<Rig> {
  const stopping: Array<() => Promise<unknown>> = []
  const stop = async () => {
    for (const close of stopping.reverse()) await close().catch(() => {})
  }
  try {
    const s3rver = await startS3rver()
    stopping.push(() => s3rver.stop())
    const storage = await startCountingProxy(s3rver.endpoint)
    stopping.push(() => storage.stop())
    const link = profile && createLink(profile)
    if (link) stopping.push(() => link.close())
    const storageUrl = link ? (await link.proxy(storage.endpoint)).url : storage.endpoint
    const sts = await startService('sts-server', { ...S3RVER_CREDENTIALS, issue: S3RVER_CREDENTIALS })
    stopping.push(() => sts.stop())
    const api = await startService('upload-api-server', {
      stsEndpoint: sts.url,
      s3Endpoint: storageUrl,
      s3Direct: s3rver.endpoint,
      keys: S3RVER_CREDENTIALS,
    })
    stopping.push(() => api.stop())
    const chromium: ChromiumBench = await startChromiumBench({
      apiUpstream: api.url,
      site: link ? async (origin) => (await link.proxy(origin)).url : undefined,
      splitContenders: MODES.map(({ page }) => page),
      sampleMemory: false,
    })
    stopping.push(() => chromium.close())
    // Unused by the upload API contenders (the upload API names the object), but a job carries one.
    const target = {
      endpoint: storageUrl,
      region: 'us-east-1',
      bucket: s3rver.bucket,
      key: 'unused',
      credentials: S3RVER_CREDENTIALS,
    }
    return {
      stop,
      async run({ mode, size }, split) {
        link?.reset()
        storage.reset()
        const what = `${mode.name} ${sizeLabel(size)} ${split ? 'lazy' : 'eager'}`
        const result = await chromium.run({
          contender: mode.page,
          split,
          target,
          size,
          partSize: PART_SIZE,
          queueSize: 4,
          resourceTimings: true,
        })
        const resources = result.resources ?? []
        const first = (test: (resource: PageResource) => boolean) =>
          resources.find(test) ?? fail(`${what}: no such request in the page's Resource Timing`)
        const { firstBodyAt } = storage.stats
        return {
          bodyMs: (firstBodyAt ?? fail(`${what}: no body reached storage`)) - result.startedAt,
          sentMs: first((resource) => resource.url.startsWith(storageUrl)).startMs,
          replyMs: first((resource) => new URL(resource.url).pathname === API_PATH).endMs,
          chunks: resources
            .filter((resource) => new URL(resource.url).pathname.startsWith('/split/'))
            .map((resource) => ({ name: chunkName(resource.url), endMs: resource.endMs })),
        }
      },
    }
  } catch (error) {
    await stop()
    throw error
  }
}

function fail(message: string): never {
  throw new Error(message)
}

/** `/split/updraft-token/multipart-45PJ77SH.js` → `multipart`; esbuild's shared chunks are `chunk-HASH`. */
const chunkName = (url: string) =>
  new URL(url).pathname
    .split('/')
    .pop()!
    .replace(/-[A-Z0-9]{8}\.js$/, '')
const sizeLabel = (size: number) => (size < MiB ? `${size / KiB} KiB` : `${size / MiB} MiB`)
const cellKey = ({ mode, size }: Cell) => `${mode.name} ${sizeLabel(size)}`
const signed = (ms: number) => `${ms > 0 ? '+' : ''}${fixed(ms, 1)}`
/** How long the lazy page still waited for a chunk after the API's reply was in (0: it was in first). */
const waitMs = (run: Measurement) => Math.max(0, ...run.chunks.map(({ endMs }) => endMs - run.replyMs))

const pairedRatio = ({ lazy, eager }: Record<ContenderId, Measurement[]>, ms: (run: Measurement) => number) =>
  median(lazy.map((run, i) => ms(run) / ms(eager[i]!)))

/**
 * A distribution-free 95% confidence interval of the median of `values` (the order statistics
 * n/2 ± 0.98·√n, from the binomial's normal approximation); none below 6 values.
 */
function interval(values: readonly number[]): string | undefined {
  const sorted = [...values].sort((a, b) => a - b)
  const k = Math.floor(sorted.length / 2 - 0.98 * Math.sqrt(sorted.length))
  return k < 0 || sorted.length < 6 ? undefined : `${signed(sorted[k]!)}..${signed(sorted[sorted.length - 1 - k]!)}`
}

function difference({ lazy, eager }: Record<ContenderId, Measurement[]>, ms: (run: Measurement) => number): string {
  const differences = lazy.map((run, i) => ms(run) - ms(eager[i]!))
  const ci = interval(differences)
  return `${signed(median(differences))}${ci ? ` (${ci})` : ''}`
}

const fileLabel = (size: number) =>
  `${sizeLabel(size)} (${size > PART_SIZE ? `${Math.ceil(size / PART_SIZE)} parts` : 'one PUT'})`

function firstByteTable(
  network: string,
  rounds: number,
  cells: Cell[],
  runs: Map<string, Record<ContenderId, Measurement[]>>,
): Table {
  const body = (run: Measurement) => run.bodyMs
  const sent = (run: Measurement) => run.sentMs
  return {
    title: `${network}: first storage byte, ms after \`upload()\`, median of ${rounds}`,
    columns: [
      'mode',
      'file',
      'body byte: lazy',
      'body byte: eager',
      'body byte: lazy − eager (95% CI)',
      'body byte: lazy/eager',
      'PUT sent: lazy',
      'PUT sent: eager',
      'PUT sent: lazy − eager (95% CI)',
      'PUT sent: lazy/eager',
    ],
    rows: cells.map((cell) => {
      const pair = runs.get(cellKey(cell))!
      const at = (measured: Measurement[], ms: (run: Measurement) => number) => fixed(median(measured.map(ms)), 1)
      return [
        cell.mode.name,
        fileLabel(cell.size),
        at(pair.lazy, body),
        at(pair.eager, body),
        difference(pair, body),
        ratio(pairedRatio(pair, body)),
        at(pair.lazy, sent),
        at(pair.eager, sent),
        difference(pair, sent),
        ratio(pairedRatio(pair, sent)),
      ]
    }),
  }
}

function chunkTable(
  network: string,
  rounds: number,
  cells: Cell[],
  runs: Map<string, Record<ContenderId, Measurement[]>>,
): Table {
  return {
    title: `${network}: the lazy page's chunks against the API's reply, ms after \`upload()\`, median of ${rounds}`,
    columns: [
      'mode',
      'file',
      'chunks loaded during the upload',
      'API reply in',
      'last chunk in',
      'uploads with a chunk in after the reply',
      'wait for chunks after the reply: median',
      'max',
    ],
    rows: cells.map((cell) => {
      const { lazy } = runs.get(cellKey(cell))!
      const names = [...new Set(lazy.flatMap((run) => run.chunks.map(({ name }) => name)))]
      if (names.length === 0)
        return [
          cell.mode.name,
          fileLabel(cell.size),
          'none',
          fixed(median(lazy.map((run) => run.replyMs)), 1),
          '-',
          '-',
          '-',
          '-',
        ]
      const waits = lazy.map(waitMs)
      return [
        cell.mode.name,
        fileLabel(cell.size),
        names.join(', '),
        fixed(median(lazy.map((run) => run.replyMs)), 1),
        fixed(median(lazy.map((run) => Math.max(...run.chunks.map(({ endMs }) => endMs)))), 1),
        `${waits.filter((wait) => wait > 0).length} of ${lazy.length}`,
        fixed(median(waits), 1),
        fixed(Math.max(...waits), 1),
      ]
    }),
  }
}

function goalOf(network: string, cell: Cell, pair: Record<ContenderId, Measurement[]>): Goal {
  const { lazy } = pair
  const late = lazy.filter((run) => waitMs(run) > 0)
  const loaded = lazy.some((run) => run.chunks.length > 0)
  const share = 1 - late.length / lazy.length
  return {
    goal: `${network}, ${cellKey(cell)}: lazy loading adds nothing to the first storage byte (its chunks in before the API's reply in >= ${100 * IN_TIME}% of uploads)`,
    figure: `${loaded ? `chunks in first in ${lazy.length - late.length} of ${lazy.length}${late.length > 0 ? `, late by ${fixed(median(late.map(waitMs)), 1)} ms (median of those)` : ''}` : 'no chunk loaded'}; first body byte lazy − eager ${difference(pair, (run) => run.bodyMs)} ms`,
    met: share >= IN_TIME,
    note: `Median first body byte lazy ${fixed(median(lazy.map((run) => run.bodyMs)), 1)} ms, eager ${fixed(median(pair.eager.map((run) => run.bodyMs)), 1)} ms; first PUT sent lazy − eager ${difference(pair, (run) => run.sentMs)} ms.`,
  }
}
