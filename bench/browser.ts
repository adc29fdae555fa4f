import { type BenchStore, nullSinkStore, s3rverStore } from './lib/bench-stores.ts'
import { browserCharts } from './lib/chart-specs.ts'
import { type ChromiumBench, type PageContender, type PageMeasurement, startChromiumBench } from './lib/chromium.ts'
import { type Benchmark, fixed, type Goal, MiB, mbps, median, mib, ratio, rotate, type Table } from './lib/report.ts'

const CONTENDERS: Array<{ id: PageContender; label: string }> = [
  { id: 'updraft', label: 'Updraft (XHR transport, Blob slices)' },
  { id: 'raw-xhr', label: 'ceiling: raw parallel XHR PUTs (presigned)' },
  { id: 'lib-storage', label: '`@aws-sdk/lib-storage` bundled in the page' },
]

const ALGORITHMS = ['md5', 'crc32', 'crc32c', 'sha256'] as const

/** No checksum, then each algorithm hashed in updraft-s3/checksums' worker and on the main thread (a page without workers). */
const VARIANTS = [
  { id: 'none', algorithm: undefined, thread: undefined },
  ...ALGORITHMS.flatMap((algorithm) =>
    (['worker', 'main'] as const).map((thread) => ({ id: `${algorithm} ${thread}`, algorithm, thread })),
  ),
]

/**
 * Issue 14: what each `checksum()` algorithm costs in a page (XHR transport, the same generated
 * Blob), against the same upload without one: hashed in the opt-in's worker (the default where a
 * page can start one), and on the page's main thread (where it cannot: CSP, no Worker).
 */
export async function checksumCost(
  chromium: ChromiumBench,
  store: BenchStore,
  {
    size,
    partSize,
    queueSize,
    rounds,
    log,
  }: { size: number; partSize: number; queueSize: number; rounds: number; log: (message: string) => void },
): Promise<Table> {
  const runs = new Map<string, PageMeasurement[]>(VARIANTS.map(({ id }) => [id, []]))
  const speed = (run: PageMeasurement) => mbps(run.bytes, run.seconds)
  for (let round = 0; round < rounds; round++) {
    for (const { id, algorithm, thread } of rotate(VARIANTS, round)) {
      const key = `bench/browser/checksum-${id.replace(' ', '-')}-${round}.bin`
      const result = await chromium.run({
        contender: 'updraft',
        target: store.target(key),
        size,
        partSize,
        queueSize,
        checksum: algorithm,
        checksumThread: thread,
      })
      await store.discard(key)
      runs.get(id)!.push(result)
      log(
        `chromium ${store.name} checksum ${id}: ${fixed(speed(result))} MB/s, longest main-thread stall ${fixed(result.longestStallMs ?? 0, 0)} ms`,
      )
    }
  }
  const none = runs.get('none')!
  return {
    title: `Chromium to ${store.name}, checksums (\`checksum()\`): ${mib(size)} MiB Blob, ${mib(partSize)} MiB parts x ${queueSize}, median of ${rounds}`,
    columns: ['checksum', 'hashed on', 'MB/s', 'vs none', 'longest main-thread stall ms'],
    rows: VARIANTS.map(({ id, algorithm, thread }) => {
      const results = runs.get(id)!
      return [
        algorithm ?? 'none',
        thread === 'main' ? 'main thread' : (thread ?? '-'),
        fixed(median(results.map(speed))),
        ratio(median(results.map((run, i) => speed(run) / speed(none[i]!)))),
        fixed(median(results.map((run) => run.longestStallMs ?? 0)), 0),
      ]
    }),
  }
}

/** Issue 5, item 4: a generated Blob uploaded from a real Chromium page, cross-origin. */
export const browser: Benchmark = {
  name: 'browser',
  title: '4. Real Chromium',
  charts: browserCharts,
  async run({ quick, log }) {
    const size = quick ? 12 * MiB : 200 * MiB
    const partSize = quick ? 5 * MiB : 8 * MiB
    const queueSize = 4
    const rounds = quick ? 1 : 3
    const chromium = await startChromiumBench()
    const tables: Table[] = []
    const goals: Goal[] = []
    const headlines: string[] = []
    try {
      for (const start of [nullSinkStore, s3rverStore]) {
        const store = await start()
        const runs = new Map<PageContender, PageMeasurement[]>(CONTENDERS.map(({ id }) => [id, []]))
        let checksumTable: Table | undefined
        try {
          for (let round = 0; round < rounds; round++) {
            for (const { id } of rotate(CONTENDERS, round)) {
              const key = `bench/browser/${id}-${round}.bin`
              const result = await chromium.run({ contender: id, target: store.target(key), size, partSize, queueSize })
              await store.discard(key)
              runs.get(id)!.push(result)
              log(`chromium ${store.name} ${id}: ${fixed(mbps(result.bytes, result.seconds))} MB/s`)
            }
          }
          if (store.name === 'null sink')
            checksumTable = await checksumCost(chromium, store, { size, partSize, queueSize, rounds, log })
        } finally {
          await store.stop()
        }
        const speed = (run: PageMeasurement) => mbps(run.bytes, run.seconds)
        const against = (id: PageContender, other: PageContender) =>
          median(runs.get(id)!.map((run, i) => speed(run) / speed(runs.get(other)![i]!)))
        tables.push({
          title: `Chromium to ${store.name}: ${mib(size)} MiB Blob, ${mib(partSize)} MiB parts x ${queueSize}, median of ${rounds}`,
          columns: ['client', 'MB/s', 'vs raw XHR ceiling', 'vs lib-storage', 'browser RSS growth MiB'],
          rows: CONTENDERS.map(({ id, label }) => [
            label,
            fixed(median(runs.get(id)!.map(speed))),
            ratio(against(id, 'raw-xhr')),
            ratio(against(id, 'lib-storage')),
            mib(median(runs.get(id)!.map((run) => run.peakRss - run.idleRss))),
          ]),
        })
        if (checksumTable) tables.push(checksumTable)
        const toCeiling = against('updraft', 'raw-xhr')
        goals.push({
          goal: `Chromium to ${store.name}: Updraft >= 0.9x the raw XHR ceiling`,
          figure: ratio(toCeiling),
          met: toCeiling >= 0.9,
          note: 'Same Blob slices through XMLHttpRequest; Updraft adds SigV4 headers (WebCrypto) and progress listeners per part, which cost little next to the transfer.',
        })
        headlines.push(
          `Chromium to ${store.name}: Updraft ${fixed(median(runs.get('updraft')!.map(speed)))} MB/s = ${ratio(toCeiling)} the raw XHR ceiling, ${ratio(against('updraft', 'lib-storage'))} lib-storage.`,
        )
      }
    } finally {
      await chromium.close()
    }
    return {
      tables,
      goals,
      headlines,
      notes: [
        'Each measurement opens a fresh page, in its own browser context, created over raw CDP (`Target.createTarget`): Playwright does not attach to it, so DevTools network monitoring, which copies ArrayBuffer bodies, is off. The page gets its job and reports its timing over plain HTTP.',
        'The page is served from another loopback port than the store: every PUT is a cross-origin XHR with a CORS preflight (part URLs differ, so each part is preflighted, in every client).',
        'The raw ceiling gets its upload created and all URLs presigned before the clock starts; it times the PUTs and Complete only.',
        "Browser RSS growth: highest sum of every Chromium process's RSS while uploading (sampled every 20 ms) minus the sum when the Blob was ready.",
        'Checksum rows: `worker` is updraft-s3/checksums in a page that can start its Blob-URL worker (the default); `main thread` is the same page without `Worker`, as under a CSP whose worker-src leaves out blob:. Longest main-thread stall: the most a 5 ms timer in the page came late during the upload (a frame is 16.7 ms).',
      ],
    }
  },
}
