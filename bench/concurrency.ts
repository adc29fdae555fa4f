import { type BenchStore, nullSinkStore, rgwStore } from './lib/bench-stores.ts'
import { type ClientResult, runClient } from './lib/child.ts'
import { type Benchmark, fixed, type Goal, MiB, mbps, median, type Table } from './lib/report.ts'

interface Cell {
  queueSize: number
  partSize: number
}

/**
 * Issue 5, item 3: queue size x part size for Updraft (default transport) on the null sink (the
 * client's own limit) and Ceph RGW (a real store's), to choose the defaults from data.
 */
export const concurrency: Benchmark = {
  name: 'concurrency',
  title: '3. Concurrency sweep (Updraft in Node, default transport: node:http)',
  async run({ quick, log, rgw }) {
    const queues = quick ? [1, 4] : [1, 2, 4, 6, 8, 12, 16]
    const parts = quick ? [5 * MiB] : [5 * MiB, 8 * MiB, 16 * MiB]
    const size = quick ? 12 * MiB : 128 * MiB
    const rounds = quick ? 1 : 3
    const cells = queues.flatMap((queueSize) => parts.map((partSize) => ({ queueSize, partSize })))
    const speeds = new Map<string, Map<string, number[]>>()
    const tables: Table[] = []

    for (const start of [nullSinkStore, () => rgwStore(rgw)]) {
      const store = await start()
      const byCell = new Map<string, number[]>(cells.map((cell) => [id(cell), []]))
      try {
        for (let round = 0; round < rounds; round++) {
          // Forward, then backward: a drift in machine load spreads over every cell.
          for (const cell of round % 2 ? [...cells].reverse() : cells) {
            const key = `bench/sweep/${cell.queueSize}-${cell.partSize}-${round}.bin`
            const result: ClientResult = await runClient({
              contender: 'updraft',
              target: store.target(key),
              body: { kind: 'memory', size },
              ...cell,
              warmUp: true,
            })
            await store.discard(key)
            byCell.get(id(cell))!.push(mbps(result.bytes, result.seconds))
            log(
              `sweep ${store.name} q${cell.queueSize} ${cell.partSize / MiB} MiB: ${fixed(mbps(result.bytes, result.seconds))} MB/s`,
            )
          }
        }
      } finally {
        await store.stop()
      }
      speeds.set(store.name, byCell)
      tables.push(sweepTable(store, byCell, { queues, parts, size, rounds }))
    }

    const choice = recommend(cells, speeds)
    tables.push({
      title: `Cells with queue <= ${BROWSER_CONNECTIONS}: share of each store's best cell, and memory in flight (queue x part)`,
      columns: [
        'queue',
        'part MiB',
        'in flight MiB',
        ...[...speeds.keys()].map((name) => `${name} share of best`),
        'worst share',
        '',
      ],
      rows: choice.candidates.map(({ cell, shares, worst }) => [
        String(cell.queueSize),
        String(cell.partSize / MiB),
        String((cell.queueSize * cell.partSize) / MiB),
        ...shares.map((share) => `${fixed(100 * share)}%`),
        `${fixed(100 * worst)}%`,
        cell === choice.pick.cell
          ? 'pick'
          : cell.queueSize === 4 && cell.partSize === 5 * MiB
            ? 'current default'
            : '-',
      ]),
    })
    const pick = choice.pick
    const goals: Goal[] = []
    return {
      tables,
      goals,
      headlines: [
        `Concurrency: queue ${pick.cell.queueSize} x ${pick.cell.partSize / MiB} MiB parts reaches ${fixed(100 * pick.worst)}% of the best cell on every store with ${(pick.cell.queueSize * pick.cell.partSize) / MiB} MiB in flight (current default: queue 4 x 5 MiB, ${fixed(100 * choice.currentDefault)}%).`,
      ],
      notes: [
        `${size / MiB} MiB per upload, median of ${rounds} run(s) per cell, cells run forward then backward; fewer rounds and one body size keep the sweep to a few minutes.`,
        `Pick rule: the smallest queue (at most ${BROWSER_CONNECTIONS}: browsers open at most 6 HTTP/1.1 connections per host, so a larger queue only waits in the browser and starves the page's other requests) at which ${choice.realName} reaches 95% of its best cell, here ${choice.queue}; then, at that queue, the part size with the best worst-share across stores.`,
        'Loopback has no latency: over a WAN each connection is bound by its round trips, so parallelism matters more there than here, and every part is one more CORS preflight in a browser (part URLs differ), which favours larger parts further.',
        'The null sink measures the client alone: on 2 shared cores, client and sink compete for CPU, so more parallelism mostly adds overhead there. RGW measures a real store, which gains from parallel parts.',
      ],
    }
  },
}

/** Chromium's (and Firefox's) limit of HTTP/1.1 connections per host. */
const BROWSER_CONNECTIONS = 6

const id = ({ queueSize, partSize }: Cell) => `${queueSize}x${partSize}`

function sweepTable(
  store: BenchStore,
  byCell: Map<string, number[]>,
  { queues, parts, size, rounds }: { queues: number[]; parts: number[]; size: number; rounds: number },
): Table {
  const best = Math.max(...[...byCell.values()].map(median))
  return {
    title: `${store.name}: MB/s by queue size (rows) and part size (columns), ${size / MiB} MiB, median of ${rounds}`,
    columns: ['queue', ...parts.map((part) => `${part / MiB} MiB parts`)],
    rows: queues.map((queueSize) => [
      String(queueSize),
      ...parts.map((partSize) => {
        const value = median(byCell.get(id({ queueSize, partSize }))!)
        return value === best ? `**${fixed(value)}**` : fixed(value)
      }),
    ]),
  }
}

/**
 * The default, from the data: the smallest queue (at most 6) at which the real store reaches 95%
 * of its best, then the part size with the best worst-share across stores at that queue. The real
 * store decides the queue because the null sink only shows the client's CPU overhead, which on
 * shared cores is mostly noise.
 */
function recommend(cells: Cell[], speeds: Map<string, Map<string, number[]>>) {
  const medians = [...speeds].map(([name, byCell]) => ({ name, of: (cell: Cell) => median(byCell.get(id(cell))!) }))
  const bests = medians.map(({ of }) => Math.max(...cells.map(of)))
  const rate = (cell: Cell) => {
    const shares = medians.map(({ of }, i) => of(cell) / bests[i]!)
    return { cell, shares, worst: Math.min(...shares) }
  }
  const real = medians.length - 1 // RGW runs last
  const eligible = cells.filter(({ queueSize }) => queueSize <= BROWSER_CONNECTIONS)
  const queues = [...new Set(eligible.map(({ queueSize }) => queueSize))].sort((a, b) => a - b)
  const realBestAt = (queue: number) =>
    Math.max(...eligible.filter(({ queueSize }) => queueSize === queue).map(medians[real]!.of))
  const queue =
    queues.find((q) => realBestAt(q) >= 0.95 * bests[real]!) ??
    queues.reduce((a, b) => (realBestAt(b) > realBestAt(a) ? b : a))
  const candidates = eligible.map(rate)
  const pick = candidates.filter(({ cell }) => cell.queueSize === queue).reduce((a, b) => (b.worst > a.worst ? b : a))
  const current = candidates.find(({ cell }) => cell.queueSize === 4 && cell.partSize === 5 * MiB)
  return { pick, candidates, currentDefault: current?.worst ?? NaN, queue, realName: medians[real]!.name }
}
