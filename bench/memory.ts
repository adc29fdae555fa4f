import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { nullSinkStore } from './lib/bench-stores.ts'
import { writeBodyFile } from './lib/body-file.ts'
import { type ClientResult, type Contender, runClient } from './lib/child.ts'
import { type PageContender, type PageMeasurement, startChromiumBench } from './lib/chromium.ts'
import { type Benchmark, fixed, type Goal, MiB, mbps, median, mib, rotate, type Table } from './lib/report.ts'

const NODE_CONTENDERS: Array<{ id: Contender; label: string }> = [
  { id: 'updraft', label: 'Updraft (Node default: node:http)' },
  { id: 'updraft-fetch', label: 'Updraft over fetch (`fetchTransport`)' },
  {
    id: 'updraft-stream',
    label: 'Updraft, the file as a stream of unknown length (`fs.createReadStream`; holds partConcurrency + 1 parts)',
  },
  { id: 'lib-storage', label: '`@aws-sdk/lib-storage` Upload' },
]

const PAGE_CONTENDERS: Array<{ id: PageContender; label: string }> = [
  { id: 'updraft', label: 'Updraft (XHR)' },
  { id: 'raw-xhr', label: "raw parallel XHR (the browser's own floor)" },
  { id: 'lib-storage', label: '`@aws-sdk/lib-storage` in the page' },
]

/**
 * Issue 5, item 5: peak memory growth over the idle baseline while uploading a large file, against
 * the goal queueSize x partSize + 16 MiB. The null sink is the store, so only the client's memory
 * is in play.
 */
export const memory: Benchmark = {
  name: 'memory',
  title: '5. Memory',
  async run({ quick, log }) {
    const size = quick ? 24 * MiB : 1024 * MiB
    const partSize = quick ? 5 * MiB : 8 * MiB
    const queueSize = 4
    const rounds = quick ? 1 : 2
    const budget = queueSize * partSize + 16 * MiB
    const tables: Table[] = []
    const goals: Goal[] = []
    const headlines: string[] = []
    const store = await nullSinkStore()
    const folder = await mkdtemp(join(tmpdir(), 'updraft-bench-'))
    try {
      const file = join(folder, 'body.bin')
      await writeBodyFile(file, size)
      const node = new Map<Contender, ClientResult[]>(NODE_CONTENDERS.map(({ id }) => [id, []]))
      for (let round = 0; round < rounds; round++) {
        for (const { id } of rotate(NODE_CONTENDERS, round)) {
          const result = await runClient({
            contender: id,
            target: store.target(`bench/memory/${id}`),
            body: { kind: 'file', path: file },
            partSize,
            queueSize,
            warmUp: true,
          })
          node.get(id)!.push(result)
          log(`memory node ${id}: +${mib(result.peakRss - result.idleRss)} MiB`)
        }
      }
      tables.push(
        memoryTable(
          `Node: ${mib(size)} MiB file-backed Blob (fs.openAsBlob), ${mib(partSize)} MiB parts x ${queueSize}, median of ${rounds}`,
          NODE_CONTENDERS,
          node,
          budget,
          'process',
        ),
      )
      const nodeGrowth = (id: Contender) => mib(median(node.get(id)!.map((run) => run.peakRss - run.idleRss)))
      goals.push(
        goalOf(
          'Node',
          node.get('updraft')!,
          budget,
          `A file-backed Blob streams in 64 KiB chunks, written to the socket with backpressure: nothing holds a whole part. Over fetch the same engine grows +${nodeGrowth('updraft-fetch')} MiB: undici holds more of each part in flight.`,
        ),
      )

      // Chromium keeps generated Blobs in memory and, in these contexts, refuses one above ~400-512
      // MiB (NotReadableError), so the 1 GiB case is a file picked through <input type=file> (a
      // file-backed Blob, as users' files are), and the generated case is as large as it can be.
      const generated = quick ? 12 * MiB : 384 * MiB
      const cases = [
        { title: `Chromium: ${mib(size)} MiB file picked through <input type=file>`, job: { size, file } },
        { title: `Chromium: ${mib(generated)} MiB Blob generated in the page (in memory)`, job: { size: generated } },
      ]
      const chromium = await startChromiumBench()
      const page = cases.map(() => new Map<PageContender, PageMeasurement[]>(PAGE_CONTENDERS.map(({ id }) => [id, []])))
      try {
        for (let round = 0; round < rounds; round++) {
          for (const [i, { job }] of cases.entries()) {
            for (const { id } of rotate(PAGE_CONTENDERS, round)) {
              const result = await chromium.run({
                contender: id,
                target: store.target(`bench/memory/${id}`),
                partSize,
                queueSize,
                ...job,
              })
              page[i]!.get(id)!.push(result)
              log(
                `memory chromium ${mib(job.size)} MiB ${job.file ? 'file' : 'generated'} ${id}: +${mib(result.peakRss - result.idleRss)} MiB`,
              )
            }
          }
        }
      } finally {
        await chromium.close()
      }
      for (const [i, { title }] of cases.entries()) {
        tables.push(
          memoryTable(
            `${title}, ${mib(partSize)} MiB parts x ${queueSize}, median of ${rounds}`,
            PAGE_CONTENDERS,
            page[i]!,
            budget,
            'all Chromium processes',
          ),
        )
        tables.push(processTable(`${title}: growth per Chromium process (median)`, page[i]!))
      }
      const pageGrowth = (i: number, id: PageContender) =>
        mib(median(page[i]!.get(id)!.map((run) => run.peakRss - run.idleRss)))
      goals.push(
        goalOf(
          `Chromium, ${mib(size)} MiB file`,
          page[0]!.get('updraft')!,
          budget,
          `Blob slices of a file are references: the browser reads each part from disk as it sends it. Raw XHR: +${pageGrowth(0, 'raw-xhr')} MiB; the rest is the renderer's V8 heap breathing with per-request garbage (it varies by ~25 MiB between runs of the same client).`,
        ),
        goalOf(
          `Chromium, ${mib(generated)} MiB generated Blob`,
          page[1]!.get('updraft')!,
          budget,
          `Chromium's browser process grows by about the whole in-memory Blob while its slices are uploaded (see the per-process table); the raw XHR ceiling does the same (+${pageGrowth(1, 'raw-xhr')} MiB), so no XHR or fetch client can meet it with a generated Blob, and nothing in the engine would close it. Files picked by users are file-backed and stay within the goal.`,
        ),
      )
      const growth = (runs: Array<ClientResult | PageMeasurement>) =>
        median(runs.map((run) => run.peakRss - run.idleRss))
      headlines.push(
        `Memory, ${mib(size)} MiB file (goal <= ${mib(budget)} MiB growth): Node Updraft +${mib(growth(node.get('updraft')!))} MiB (over fetch +${mib(growth(node.get('updraft-fetch')!))}) vs lib-storage +${mib(growth(node.get('lib-storage')!))}; Chromium Updraft +${mib(growth(page[0]!.get('updraft')!))} MiB vs lib-storage +${mib(growth(page[0]!.get('lib-storage')!))} (raw XHR +${mib(growth(page[0]!.get('raw-xhr')!))}).`,
      )
    } finally {
      await store.stop()
      await rm(folder, { recursive: true, force: true })
    }
    return {
      tables,
      goals,
      headlines,
      notes: [
        `Goal: growth <= queueSize x partSize + 16 MiB = ${mib(budget)} MiB.`,
        "Node: growth = the client process's VmHWM during the upload (reset through /proc/self/clear_refs at its start) minus its RSS just before, after a GC, with modules loaded, the Blob opened and a 1 KiB warm-up upload done by the same client.",
        'Chromium: growth = the highest sum of RSS over every Chromium process (browser, renderer, network service), sampled every 20 ms, minus the sum once the Blob was made and the page idle. The raw XHR row is what the browser itself spends to send Blob slices.',
      ],
    }
  },
}

function memoryTable<T extends string>(
  title: string,
  contenders: Array<{ id: T; label: string }>,
  runs: Map<T, Array<ClientResult | PageMeasurement>>,
  budget: number,
  scope: string,
): Table {
  return {
    title,
    columns: ['client', 'MB/s', `idle RSS MiB (${scope})`, 'peak growth MiB', 'growth / goal'],
    rows: contenders.map(({ id, label }) => {
      const results = runs.get(id)!
      const growth = median(results.map((run) => run.peakRss - run.idleRss))
      return [
        label,
        fixed(median(results.map((run) => mbps(run.bytes, run.seconds)))),
        mib(median(results.map((run) => run.idleRss))),
        mib(growth),
        `${fixed((100 * growth) / budget)}%`,
      ]
    }),
  }
}

/** Which Chromium processes grew: the browser process holds Blob data and feeds uploads, the renderer runs the page's JS. */
function processTable(title: string, runs: Map<PageContender, PageMeasurement[]>): Table {
  const kinds = [...new Set([...runs.values()].flat().flatMap((run) => run.processes.map((p) => p.kind)))].sort()
  const growthOf = (run: PageMeasurement, kind: string) =>
    run.processes.filter((p) => p.kind === kind).reduce((sum, p) => sum + p.peakRss - p.idleRss, 0)
  const shown = kinds.filter((kind) =>
    [...runs.values()].some((list) => list.some((run) => growthOf(run, kind) >= MiB)),
  )
  return {
    title,
    columns: ['client', ...shown.map((kind) => `${kind} MiB`)],
    rows: PAGE_CONTENDERS.map(({ id, label }) => [
      label,
      ...shown.map((kind) => mib(median(runs.get(id)!.map((run) => growthOf(run, kind))))),
    ]),
  }
}

function goalOf(where: string, runs: Array<ClientResult | PageMeasurement>, budget: number, note: string): Goal {
  const growth = median(runs.map((run) => run.peakRss - run.idleRss))
  return {
    goal: `${where}: Updraft peak growth <= ${mib(budget)} MiB`,
    figure: `${mib(growth)} MiB`,
    met: growth <= budget,
    note,
  }
}
