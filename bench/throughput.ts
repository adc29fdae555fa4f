import { type BenchStore, nullSinkStore, s3rverStore } from './lib/bench-stores.ts'
import { throughputCharts } from './lib/chart-specs.ts'
import { type ClientResult, type Contender, runClient } from './lib/child.ts'
import { type Benchmark, fixed, type Goal, MiB, mbps, median, mib, ratio, rotate, type Table } from './lib/report.ts'

const CONTENDERS: Array<{ id: Contender; label: string }> = [
  { id: 'updraft', label: 'Updraft (Node default transport: node:http)' },
  { id: 'updraft-buffer', label: 'Updraft, a Node `Buffer` body (node:http, sent as views)' },
  { id: 'updraft-fetch', label: "Updraft over fetch (`fetchTransport`, the workers' default)" },
  { id: 'lib-storage', label: '`@aws-sdk/lib-storage` Upload' },
  { id: 'fetch-ceiling', label: 'ceiling: raw parallel fetch PUTs' },
  { id: 'http-ceiling', label: 'ceiling: raw parallel node:http PUTs' },
  {
    id: 'http-ceiling-buffer',
    label: 'ceiling: raw parallel node:http PUTs of a `Buffer` (subarray views, each written whole)',
  },
]

/** Issue 5, item 2: Node upload throughput; every measurement a fresh child process. */
export const throughput: Benchmark = {
  name: 'throughput',
  title: '2. Node throughput',
  charts: throughputCharts,
  async run({ quick, log }) {
    const size = quick ? 12 * MiB : 256 * MiB
    const partSize = quick ? 5 * MiB : 8 * MiB
    const queues = quick ? [4] : [1, 4, 8]
    // The null sink is fast (about a second a run) and noisier in relative terms: more rounds there.
    const roundsFor = (store: BenchStore) => (quick ? 1 : store.name === 'null sink' ? 5 : 3)
    const tables: Table[] = []
    const goals: Goal[] = []
    const headlines: string[] = []
    for (const start of [nullSinkStore, s3rverStore]) {
      const store = await start()
      try {
        const rounds = roundsFor(store)
        const runs = await measure(store, { size, partSize, queues, rounds, log })
        tables.push(tableOf(store, runs, { size, partSize, rounds }))
        if (store.name === 'null sink') {
          goals.push(...goalsOf(runs))
          tables.push(await checksumCost(store, { size, partSize, rounds, log }))
        }
        headlines.push(headlineOf(store, runs))
      } finally {
        await store.stop()
      }
    }
    return {
      tables,
      goals,
      headlines,
      notes: [
        `${mib(size)} MiB in-memory Blob, ${mib(partSize)} MiB parts; each cell is the median of the table's run count, contenders alternated round by round; ratios are medians of per-round ratios (same round, same conditions).`,
        'MB/s = 10^6 bytes/s. CPU = user + system seconds of the client process during the upload; peak RSS = its VmHWM during the upload (includes the body, which is in memory).',
        'lib-storage runs with `requestChecksumCalculation: WHEN_REQUIRED` (no per-part CRC32; Updraft computes none). A fresh `node` per measurement, which first uploads 1 KiB with the same client (warm-up: module loading, first use of WebCrypto and JIT are per process, not per upload).',
        'The ceilings create the upload, PUT the same slices with presigned URLs (no retries, progress or checks), then Complete.',
        "Checksum rows: `worker_threads` is updraft-s3/checksums' default in Node (a worker started on the first part, not warmed up); `upload's thread` is the same client with worker_threads taken away.",
      ],
    }
  },
}

type Runs = Map<number, Map<Contender, ClientResult[]>>

const ALGORITHMS = ['md5', 'crc32', 'crc32c', 'sha256'] as const

/** No checksum, then each algorithm hashed in updraft-s3/checksums' worker_threads worker and on the upload's own thread. */
const VARIANTS = [
  { id: 'none', algorithm: undefined, thread: undefined },
  ...ALGORITHMS.flatMap((algorithm) =>
    (['worker', 'main'] as const).map((thread) => ({ id: `${algorithm} ${thread}`, algorithm, thread })),
  ),
]

/**
 * Issue 14: what each `checksum()` algorithm costs, Updraft over node:http at the default queue of
 * 4, against the same upload without one: hashed in the opt-in's worker_threads worker (its
 * default in Node) and on the upload's own thread (a runtime without worker_threads). node:http's
 * upload is CPU-bound on that thread, so on a fast link the hashing there bounds the upload; the
 * sink answers Content-MD5 bodies with that MD5 as ETag, as S3 does, so the engine's checks pass
 * without the sink hashing anything.
 */
export async function checksumCost(
  store: BenchStore,
  { size, partSize, rounds, log }: { size: number; partSize: number; rounds: number; log: (message: string) => void },
): Promise<Table> {
  const runs = new Map<string, ClientResult[]>(VARIANTS.map(({ id }) => [id, []]))
  for (let round = 0; round < rounds; round++) {
    for (const { id, algorithm, thread } of rotate(VARIANTS, round)) {
      const key = `bench/throughput/checksum-${id.replace(' ', '-')}-${round}.bin`
      const result = await runClient({
        contender: 'updraft',
        target: store.target(key),
        body: { kind: 'memory', size },
        partSize,
        queueSize: 4,
        warmUp: true,
        checksum: algorithm,
        checksumThread: thread,
      })
      await store.discard(key)
      runs.get(id)!.push(result)
      log(`throughput ${store.name} checksum ${id}: ${fixed(mbps(result.bytes, result.seconds))} MB/s`)
    }
  }
  const none = runs.get('none')!
  return {
    title: `${store.name}, checksums (\`checksum()\`, updraft-s3/checksums): ${mib(size)} MiB, ${mib(partSize)} MiB parts, queue 4, median of ${rounds}`,
    columns: ['checksum', 'hashed on', 'MB/s', 'vs none', 'client CPU s'],
    rows: VARIANTS.map(({ id, algorithm, thread }) => {
      const results = runs.get(id)!
      return [
        algorithm ?? 'none',
        thread === 'main' ? "upload's thread" : thread === 'worker' ? 'worker_threads' : '-',
        fixed(median(results.map(speed))),
        ratio(roundRatio(results, none)),
        fixed(median(results.map((r) => r.cpuSeconds)), 2),
      ]
    }),
  }
}

async function measure(
  store: BenchStore,
  {
    size,
    partSize,
    queues,
    rounds,
    log,
  }: { size: number; partSize: number; queues: number[]; rounds: number; log: (message: string) => void },
): Promise<Runs> {
  const runs: Runs = new Map(queues.map((queue) => [queue, new Map(CONTENDERS.map(({ id }) => [id, []]))]))
  for (let round = 0; round < rounds; round++) {
    for (const queueSize of queues) {
      for (const { id } of rotate(CONTENDERS, round + queueSize)) {
        const key = `bench/throughput/${id}-${queueSize}-${round}.bin`
        const result = await runClient({
          contender: id,
          target: store.target(key),
          body: { kind: 'memory', size },
          partSize,
          queueSize,
          warmUp: true,
        })
        await store.discard(key)
        runs.get(queueSize)!.get(id)!.push(result)
        log(`throughput ${store.name} q${queueSize} ${id}: ${fixed(mbps(result.bytes, result.seconds))} MB/s`)
      }
    }
  }
  return runs
}

const speed = (result: ClientResult) => mbps(result.bytes, result.seconds)

/** Median over rounds of `a / b` taken within each round. */
const roundRatio = (a: ClientResult[], b: ClientResult[]) => median(a.map((run, i) => speed(run) / speed(b[i]!)))

function tableOf(
  store: BenchStore,
  runs: Runs,
  { size, partSize, rounds }: { size: number; partSize: number; rounds: number },
): Table {
  const rows: string[][] = []
  for (const [queueSize, byContender] of runs) {
    const lib = byContender.get('lib-storage')!
    const ceiling = byContender.get('fetch-ceiling')!
    for (const { id, label } of CONTENDERS) {
      const results = byContender.get(id)!
      rows.push([
        String(queueSize),
        label,
        fixed(median(results.map(speed))),
        ratio(roundRatio(results, lib)),
        ratio(roundRatio(results, ceiling)),
        fixed(median(results.map((r) => r.cpuSeconds)), 2),
        mib(median(results.map((r) => r.peakRss))),
        mib(median(results.map((r) => r.peakRss - r.idleRss))),
      ])
    }
  }
  return {
    title: `${store.name}: ${mib(size)} MiB, ${mib(partSize)} MiB parts, median of ${rounds}`,
    columns: [
      'queue',
      'client',
      'MB/s',
      'vs lib-storage',
      'vs fetch ceiling',
      'client CPU s',
      'peak RSS MiB',
      'RSS growth MiB',
    ],
    rows,
  }
}

function goalsOf(runs: Runs): Goal[] {
  const per = (id: Contender, against: Contender) =>
    [...runs].map(([queue, byContender]) => ({
      queue,
      value: roundRatio(byContender.get(id)!, byContender.get(against)!),
    }))
  const goal = (
    text: string,
    values: Array<{ queue: number; value: number }>,
    threshold: number,
    note: string,
  ): Goal => ({
    goal: text,
    figure: values.map(({ queue, value }) => `q${queue} ${ratio(value)}`).join(', '),
    met: values.every(({ value }) => value >= threshold),
    note,
  })
  const cpu = (id: Contender) =>
    median([...runs.values()].flatMap((byContender) => byContender.get(id)!.map((run) => run.cpuSeconds)))
  const node = `Over node:http Updraft spends ${fixed(cpu('updraft'), 2)} CPU-s per upload against ${fixed(cpu('updraft-fetch'), 2)} over fetch and ${fixed(cpu('lib-storage'), 2)} for lib-storage.`
  return [
    goal('null sink: Updraft >= 0.9x the fetch ceiling', per('updraft', 'fetch-ceiling'), 0.9, node),
    goal('null sink: Updraft >= 2x lib-storage', per('updraft', 'lib-storage'), 2, node),
    goal(
      'null sink, issue 14: Updraft with a Buffer body >= 0.9x the node:http ceiling for a Buffer',
      per('updraft-buffer', 'http-ceiling-buffer'),
      0.9,
      'The same bytes as a Buffer: parts are subarray views written to node:http in 1 MiB views, no Blob stream in between (a Blob body wrapped around a Buffer measured 0.51x).',
    ),
    goal(
      'null sink, informative: Updraft over fetch >= 0.9x the fetch ceiling',
      per('updraft-fetch', 'fetch-ceiling'),
      0.9,
      "The same Blob slices through the same fetch: a CPU profile (node --cpu-prof) puts the time in Node's Blob stream and undici, not in engine code (signing, retries, progress under 2%); single runs vary by 10-30% on these shared cores.",
    ),
  ]
}

/** At queue size 4 (the default), or the only one measured. */
function headlineOf(store: BenchStore, runs: Runs): string {
  const queue = runs.has(4) ? 4 : [...runs.keys()][0]!
  const byContender = runs.get(queue)!
  const of = (id: Contender) => byContender.get(id)!
  return (
    `Node to ${store.name} (queue ${queue}): Updraft ${fixed(median(of('updraft').map(speed)))} MB/s = ${ratio(roundRatio(of('updraft'), of('lib-storage')))} lib-storage, ` +
    `${ratio(roundRatio(of('updraft'), of('fetch-ceiling')))} the fetch ceiling; over fetch ${fixed(median(of('updraft-fetch').map(speed)))} MB/s = ` +
    `${ratio(roundRatio(of('updraft-fetch'), of('lib-storage')))} lib-storage, ${ratio(roundRatio(of('updraft-fetch'), of('fetch-ceiling')))} the fetch ceiling; ` +
    `a Buffer body ${fixed(median(of('updraft-buffer').map(speed)))} MB/s = ${ratio(roundRatio(of('updraft-buffer'), of('http-ceiling-buffer')))} the node:http ceiling for a Buffer.`
  )
}
