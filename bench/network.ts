import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { writeBodyFile } from './lib/body-file.ts'
import { networkCharts } from './lib/chart-specs.ts'
import { type Contender, runClient, type Service, startService } from './lib/child.ts'
import { type ChromiumBench, type PageContender, startChromiumBench } from './lib/chromium.ts'
import { createLink, type Link, type LinkProfile, type LinkProxy, PROFILES } from './lib/link.ts'
import { type NullSink, startNullSink } from './lib/null-sink.ts'
import { type Benchmark, fixed, type Goal, MiB, mbps, median, mib, rotate, type Table } from './lib/report.ts'

type Runtime = 'node' | 'chromium'
type Id = Contender | PageContender

interface ContenderSpec {
  id: Id
  label: string
  peer?: true
}

const CONTENDERS: Record<Runtime, ContenderSpec[]> = {
  node: [
    { id: 'updraft-token', label: 'Updraft token mode (upload API + STS, then storage)' },
    { id: 'updraft-presigned', label: 'Updraft presigned mode (upload API signs every request)' },
    { id: 'lib-storage', label: '`@aws-sdk/lib-storage` Upload (credentials in hand)', peer: true },
    { id: 'http-ceiling', label: 'ceiling: raw parallel node:http PUTs (presigned, no upload API)' },
  ],
  chromium: [
    { id: 'updraft-token', label: 'Updraft token mode (same-origin upload API, XHR to storage)' },
    { id: 'updraft-presigned', label: 'Updraft presigned mode (same-origin upload API, XHR to storage)' },
    { id: 'uppy', label: '`@uppy/aws-s3` (credentials from the same upload API, signs itself)', peer: true },
    { id: 'lib-storage', label: '`@aws-sdk/lib-storage` in the page (credentials in hand)', peer: true },
    { id: 'raw-xhr', label: 'ceiling: raw parallel XHR PUTs (created and presigned before the clock)' },
  ],
}
const UPDRAFT: Id[] = ['updraft-token', 'updraft-presigned']

const KEYS = { accessKeyId: 'BENCH', secretAccessKey: 'BENCH' }
/** Every contender's part size and parts in flight; NETWORK_PART_MIB and NETWORK_QUEUE try others. */
const PART_SIZE = Number(process.env.NETWORK_PART_MIB ?? 5) * MiB
const QUEUE_SIZE = Number(process.env.NETWORK_QUEUE ?? 4)

/** Sizes per profile: 512 MiB only where a run takes under a minute or so. */
const PLAN: Array<{ profile: keyof typeof PROFILES; sizes: number[] }> = [
  { profile: 'fibre', sizes: [5 * MiB, 64 * MiB, 512 * MiB] },
  { profile: 'home', sizes: [5 * MiB, 64 * MiB, 512 * MiB] },
  { profile: 'transatlantic', sizes: [5 * MiB, 64 * MiB, 512 * MiB] },
  { profile: 'mobile', sizes: [5 * MiB, 64 * MiB] },
  { profile: 'wifi', sizes: [5 * MiB, 64 * MiB, 512 * MiB] },
]
/**
 * Chromium refuses a generated Blob above ~400-512 MiB (NotReadableError): larger bodies are a file
 * picked through `<input type=file>`, as users' files are, for every contender alike.
 */
const LARGEST_GENERATED = 256 * MiB
const QUICK_PLAN: typeof PLAN = [{ profile: 'home', sizes: [5 * MiB, 12 * MiB] }]

/**
 * `NETWORK_PLAN=transatlantic:64,home:5+64` runs only those profiles and sizes (MiB), to look at
 * one figure without the whole hour.
 */
function planFromEnv(spec: string | undefined): typeof PLAN | undefined {
  if (!spec) return undefined
  return spec.split(',').map((item) => {
    const [profile, sizes = '64'] = item.split(':')
    if (!profile || !(profile in PROFILES))
      throw new TypeError(`NETWORK_PLAN: unknown profile '${profile}'; one of ${Object.keys(PROFILES).join(', ')}`)
    return {
      profile: profile as keyof typeof PROFILES,
      sizes: sizes.split('+').map((mebibytes) => Number(mebibytes) * MiB),
    }
  })
}

interface Measurement {
  seconds: number
  bytes: number
  /** From the upload's start to the first byte leaving for storage over the link. */
  firstByteMs: number
  /** Upstream bytes to storage beyond the body: request headers, and anything sent twice. */
  extraBytes: number
  /** How long the link was down (its outages) while this upload ran. */
  downSeconds: number
}

/**
 * Issue 16: uploads over an emulated access link (bench/lib/link.ts). Page ↔ upload API and
 * page ↔ storage both cross the one link; every contender runs in a fresh `node` per upload.
 */
export const network: Benchmark = {
  name: 'network',
  title: '7. Emulated networks (Node and Chromium)',
  charts: networkCharts,
  async run({ quick, log }) {
    const tables: Table[] = []
    const goals: Goal[] = []
    const headlines: string[] = []
    for (const { profile: name, sizes } of planFromEnv(process.env.NETWORK_PLAN) ?? (quick ? QUICK_PLAN : PLAN)) {
      const profile = PROFILES[name]!
      const rig = await startRig(profile)
      try {
        for (const runtime of ['node', 'chromium'] as const) {
          const contenders = CONTENDERS[runtime]
          for (const size of sizes) {
            const rounds = quick ? 1 : size <= 64 * MiB ? 3 : 1
            const runs = new Map<Id, Measurement[]>(contenders.map(({ id }) => [id, []]))
            for (let round = 0; round < rounds; round++) {
              for (const { id } of rotate(contenders, round)) {
                const result = await rig.run(runtime, id, size)
                runs.get(id)!.push(result)
                log(
                  `${name} ${runtime} ${mib(size)} MiB ${id}: ${fixed(mbps(result.bytes, result.seconds))} MB/s, first byte ${fixed(result.firstByteMs, 0)} ms`,
                )
              }
            }
            tables.push(tableOf(profile, runtime, size, rounds, runs))
            if (size >= 64 * MiB) goals.push(...goalsOf(profile, runtime, size, runs))
            if (size === 64 * MiB || (quick && size === sizes.at(-1)))
              headlines.push(headlineOf(profile, runtime, size, runs))
          }
        }
      } finally {
        await rig.stop()
      }
    }
    return {
      tables,
      goals,
      headlines,
      notes: [
        "The link (bench/lib/link.ts) is a TCP proxy in user space: one line per direction shared by every connection, a one-way delay, a handshake round trip before a new connection's first bytes, loss rendered as a one-round-trip stall of the connection that lost a segment, outages that hold bytes. Calibrated: a raw TCP transfer through it runs at 99-100% of the configured rate (1 and 4 connections) on an idle machine.",
        "In Chromium the page is same-origin with the upload API (the harness forwards `/api/s3-upload` over one warm keep-alive connection through the link, as a page's own connection to its origin is open before it uploads) and cross-origin with storage, so every part PUT pays a CORS preflight in every client.",
        "Storage is the null sink (it stores nothing, so the store's own speed is out of the figures). The upload API is the Fastify plugin with the STS stand-in, in processes of their own; pages reach it across the link, and its own calls to STS and to storage (presigned CreateMultipartUpload and Complete, the HEAD and ranged GET of `/complete`) do not cross it: a server runs next to its store, not behind the uploader's access link.",
        `${mib(PART_SIZE)} MiB parts, ${QUEUE_SIZE} in flight for every contender (Updraft's and lib-storage's defaults); no warm-up upload, so every run opens its connections cold, as a page's first upload does.`,
        "First byte: from the upload's start to the first byte leaving for storage (any request, a preflight included). The protocol needs at least 3 round trips cold in Node (the upload API's handshake, its request, storage's handshake) and 2 in a page (the upload API request on the page's open connection, storage's handshake; the CORS preflight is that first byte). Extra up: bytes sent to storage beyond the body (headers, preflights; anything sent twice).",
        "Fraction of link: MB/s over the line rate while the link was up. The Wi-Fi profile's drops restart with every run (the first 2 s in, then every 30 s), so every contender meets the same ones, and its MB/s column counts them while its fraction does not: a client that rides a drop out loses its 3 s and no more. Ratios within a size are medians of same-round runs, contenders alternated.",
      ],
    }
  },
}

interface Rig {
  run(runtime: Runtime, contender: Id, size: number): Promise<Measurement>
  stop(): Promise<void>
}

async function startRig(profile: LinkProfile): Promise<Rig> {
  const stopping: Array<() => Promise<void>> = []
  const stop = async () => {
    for (const close of stopping.reverse()) await close().catch(() => {})
  }
  try {
    const sink: NullSink = await startNullSink()
    stopping.push(() => sink.stop())
    const link: Link = createLink(profile)
    stopping.push(() => link.close())
    const storage: LinkProxy = await link.proxy(sink.endpoint)
    const sts: Service = await startService('sts-server', KEYS)
    stopping.push(() => sts.stop())
    const apiServer = await startService('upload-api-server', {
      stsEndpoint: sts.url,
      s3Endpoint: storage.url,
      s3Direct: sink.endpoint,
      keys: KEYS,
    })
    stopping.push(() => apiServer.stop())
    const api = await link.proxy(apiServer.url)
    await warmUp(apiServer.url)
    const chromium: ChromiumBench = await startChromiumBench({ apiUpstream: api.url })
    stopping.push(() => chromium.close())
    const folder = await mkdtemp(join(tmpdir(), 'updraft-network-'))
    stopping.push(() => rm(folder, { recursive: true, force: true }))
    const files = new Map<number, Promise<string>>()
    /** A file of `size` bytes for Chromium to pick, written once per size; none for sizes a page can generate. */
    const pickable = (size: number) => {
      if (size <= LARGEST_GENERATED) return undefined
      if (!files.has(size)) {
        const path = join(folder, `${size}.bin`)
        files.set(
          size,
          writeBodyFile(path, size).then(() => path),
        )
      }
      return files.get(size)
    }
    let n = 0
    return {
      stop,
      async run(runtime, contender, size) {
        link.reset()
        const target = {
          endpoint: storage.url,
          region: 'us-east-1',
          bucket: 'uploads',
          key: `bench/network/${n++}.bin`,
          credentials: KEYS,
        }
        const result =
          runtime === 'node'
            ? await runClient({
                contender: contender as Contender,
                target,
                api: `${api.url}/api/s3-upload`,
                body: { kind: 'memory', size },
                partSize: PART_SIZE,
                queueSize: QUEUE_SIZE,
              })
            : await chromium.run({
                contender: contender as PageContender,
                target,
                size,
                file: await pickable(size),
                partSize: PART_SIZE,
                queueSize: QUEUE_SIZE,
              })
        return {
          seconds: result.seconds,
          bytes: result.bytes,
          firstByteMs: (storage.firstUpByteAfter(result.startedAt) ?? NaN) - result.startedAt,
          extraBytes: storage.upBytes - size,
          downSeconds: link.downtimeMs(result.startedAt, result.startedAt + result.seconds * 1000) / 1000,
        }
      },
    }
  } catch (error) {
    await stop()
    throw error
  }
}

/**
 * One request of each kind straight to the upload API server (not over the link): the server's SDK
 * clients load their code on first use, which a server that has been up a while has long done.
 */
async function warmUp(apiUrl: string) {
  for (const [strategy, filesize] of [
    ['token', 1],
    ['presigned', 1],
    ['presigned', 6 * MiB],
  ] as const) {
    const response = await fetch(`${apiUrl}/api/s3-upload`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ filename: 'warm-up.bin', filetype: 'application/octet-stream', filesize, strategy }),
    })
    if (!response.ok)
      throw new Error(`upload API warm-up (${strategy}) answered ${response.status}: ${await response.text()}`)
  }
}

const speed = (run: Measurement) => mbps(run.bytes, run.seconds)
const linkMBps = (profile: LinkProfile) => profile.upBytesPerSecond / 1e6
/**
 * Of the capacity the link offered while the upload ran: the line rate over the time it was up.
 * A drop costs every client its length alike; what tells them apart is how they ride it out.
 */
const fractionOfLink = (profile: LinkProfile, run: Measurement) =>
  mbps(run.bytes, run.seconds - run.downSeconds) / linkMBps(profile)
const rttMs = (profile: LinkProfile) => 2 * profile.delayMs

function tableOf(
  profile: LinkProfile,
  runtime: Runtime,
  size: number,
  rounds: number,
  runs: Map<Id, Measurement[]>,
): Table {
  const capacity = linkMBps(profile)
  return {
    title: `${profile.name}, ${runtime === 'node' ? 'Node' : 'Chromium'}: ${mib(size)} MiB, median of ${rounds}`,
    columns: ['client', 'MB/s', 'fraction of link', 'first byte ms (RTTs)', 'extra up KiB'],
    rows: [
      ['the link itself (line rate)', fixed(capacity, 1), '100%', '—', '—'],
      ...CONTENDERS[runtime].map(({ id, label }) => {
        const measured = runs.get(id)!
        const firstByte = median(measured.map((run) => run.firstByteMs))
        return [
          label,
          fixed(median(measured.map(speed)), 1),
          `${fixed(100 * median(measured.map((run) => fractionOfLink(profile, run))), 1)}%`,
          `${fixed(firstByte, 0)} (${fixed(firstByte / rttMs(profile), 1)})`,
          fixed(median(measured.map((run) => run.extraBytes)) / 1024, 0),
        ]
      }),
    ],
  }
}

function goalsOf(profile: LinkProfile, runtime: Runtime, size: number, runs: Map<Id, Measurement[]>): Goal[] {
  const peers = CONTENDERS[runtime].filter((contender) => contender.peer).map(({ id }) => id)
  return UPDRAFT.flatMap((id) => {
    const fraction = median(runs.get(id)!.map((run) => fractionOfLink(profile, run)))
    const firstByteRtts = median(runs.get(id)!.map((run) => run.firstByteMs)) / rttMs(profile)
    const ahead = peers.every(
      (peer) => median(runs.get(id)!.map((run, i) => speed(run) / speed(runs.get(peer)![i]!))) > 1,
    )
    return [
      {
        goal: `${profile.name}, ${runtime}, ${mib(size)} MiB, ${id}: >= 95% of the link, ahead of every peer`,
        figure: `${fixed(100 * fraction, 1)}% of the link; ${ahead ? 'ahead of' : 'NOT ahead of'} ${peers.join(', ')}`,
        met: fraction >= 0.95 && ahead,
      },
      {
        goal: `${profile.name}, ${runtime}, ${mib(size)} MiB, ${id}: first byte within one round trip of the protocol's minimum`,
        figure: `${fixed(firstByteRtts, 1)} RTTs`,
        met: firstByteRtts <= minimumRtts(runtime) + 1,
      },
    ]
  })
}

function headlineOf(profile: LinkProfile, runtime: Runtime, size: number, runs: Map<Id, Measurement[]>): string {
  const parts = CONTENDERS[runtime].map(
    ({ id }) => `${id} ${fixed(100 * median(runs.get(id)!.map((run) => fractionOfLink(profile, run))), 0)}%`,
  )
  return `Network, ${profile.name}, ${runtime}, ${mib(size)} MiB: fraction of the link — ${parts.join(', ')}.`
}

/**
 * Round trips before the first byte can leave for storage, cold: Node opens a connection to the
 * upload API (1), asks it (1), opens one to storage (1). A page's connection to its origin is
 * already open: it asks the upload API (1) and opens one to storage (1), where its preflight leaves.
 */
const minimumRtts = (runtime: Runtime) => (runtime === 'node' ? 3 : 2)
