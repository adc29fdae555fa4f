// Which charts each benchmark draws, from its own tables: the rows a run prints (or the tables
// bench/RESULTS.md already holds, parsed back by results-file.ts), so tables and charts cannot
// disagree. Each function takes a section's tables and returns what to write to bench/charts/.
import type { Bar, BarChart, BarGroup } from './chart.ts'
import type { Table } from './report.ts'

export interface ChartFile {
  /** File name in bench/charts/, without .svg. */
  name: string
  chart: BarChart
}

export type ChartSpec = (tables: readonly Table[]) => ChartFile[]

/** Section 1: what a page ships, Updraft's entries beside the peers (gzip, 1 KB = 1000 B). */
export const bundleCharts: ChartSpec = (tables) => {
  const table = find(tables, /^Bytes shipped/)
  if (!table) return []
  const bars = rows(table)
    .filter((row) => !/^for reference|checksums/.test(row.get('bundle')))
    .map((row): Bar & { react: boolean } => {
      const label = row.get('bundle')
      const updraft = label.startsWith('Updraft')
      const gzip = number(row.get('gzip B (with the page)'))
      return {
        label: shortName(label),
        value: gzip / 1000,
        text: `${(gzip / 1000).toFixed(2)} KB`,
        kind: updraft ? 'updraft' : 'peer',
        react: /React/.test(label),
      }
    })
  const groups: BarGroup[] = [
    { title: 'Uploading (no UI)', bars: bars.filter((bar) => !bar.react).map(({ react: _, ...bar }) => bar) },
    {
      title: 'React (React and Next.js not counted)',
      bars: bars.filter((bar) => bar.react).map(({ react: _, ...bar }) => bar),
    },
  ]
  return [
    {
      name: 'bundle',
      chart: {
        title: 'What a page ships: gzip size of each import',
        description: 'esbuild for the browser, ESM, minified, gzip level 9; 1 KB = 1000 B. Shorter is better.',
        unit: 'KB gzip',
        groups,
        footnote: 'bench/RESULTS.md, section 1 (npm run bench -- bundle)',
      },
    },
  ]
}

/** Section 2: Node at queue 4 (the default), as a share of the raw fetch ceiling. */
export const throughputCharts: ChartSpec = (tables) => {
  const groups: BarGroup[] = []
  for (const [pattern, store] of [
    [/^null sink:/, 'null sink (the client alone)'],
    [/^s3rver:/, 's3rver (a real, slow store)'],
  ] as const) {
    const table = find(tables, pattern)
    if (!table) continue
    const bars = rows(table)
      .filter((row) => row.get('queue') === '4')
      .map((row) => shareBar(row, 'vs fetch ceiling'))
    if (bars.length > 0) groups.push({ title: `Node to ${store}, queue 4`, bars })
  }
  if (groups.length === 0) return []
  return [
    {
      name: 'throughput',
      chart: {
        title: 'Node throughput against the raw ceilings (queue 4)',
        description:
          'MB/s of each client as a share of raw parallel fetch PUTs of the same Blob slices in the same rounds (100% = that ceiling). Longer is better.',
        unit: '% of the fetch ceiling',
        groups,
        references: [
          { value: 90, label: 'goal (null sink): 90% of the fetch ceiling' },
          { value: 100, label: 'raw fetch PUTs (100%)' },
        ],
        footnote: 'bench/RESULTS.md, section 2 (npm run bench -- throughput)',
      },
    },
  ]
}

/** A client's bar as its share of a ceiling (the ratio in `column`), with its rate beside it. */
function shareBar(row: Row, column: string): Bar {
  const share = 100 * number(row.get(column))
  return {
    label: shortName(row.get('client')),
    value: share,
    text: `${Math.round(share)}% · ${row.get('MB/s')} MB/s`,
    kind: kindOf(row.get('client')),
  }
}

/** Section 4: Chromium, as a share of raw parallel XHR PUTs. */
export const browserCharts: ChartSpec = (tables) => {
  const groups: BarGroup[] = []
  for (const table of tables.filter((table) => /^Chromium to [^,]+:/.test(table.title))) {
    const store = /^Chromium to ([^:]+):/.exec(table.title)![1]!
    const bars = rows(table).map((row) => shareBar(row, 'vs raw XHR ceiling'))
    groups.push({ title: `Chromium to ${store}`, bars })
  }
  if (groups.length === 0) return []
  return [
    {
      name: 'browser',
      chart: {
        title: 'Chromium throughput against the raw XHR ceiling',
        description:
          'MB/s of each client in a real Chromium page as a share of raw parallel XHR PUTs of the same Blob slices (100% = that ceiling). Longer is better.',
        unit: '% of the raw XHR ceiling',
        groups,
        references: [
          { value: 90, label: 'goal: 90% of the ceiling' },
          { value: 100, label: 'raw XHR PUTs (100%)' },
        ],
        footnote: 'bench/RESULTS.md, section 4 (npm run bench -- browser)',
      },
    },
  ]
}

/**
 * Section 7: fraction of the link per profile and contender at 64 MiB, the goal's smallest size (a
 * run without it, `--quick` or a NETWORK_PLAN, is drawn at its largest size).
 */
export const networkCharts: ChartSpec = (tables) =>
  (['Node', 'Chromium'] as const).flatMap((runtime): ChartFile[] => {
    const pattern = new RegExp(`^(.+), ${runtime}: (\\d+) MiB`)
    const ours = tables.flatMap((table) => {
      const match = pattern.exec(table.title)
      return match ? [{ table, profile: match[1]!, size: Number(match[2]) }] : []
    })
    const sizes = new Set(ours.map(({ size }) => size))
    const size = sizes.has(64) ? 64 : Math.max(...sizes)
    const groups = ours
      .filter((entry) => entry.size === size)
      .map(
        ({ table, profile }): BarGroup => ({
          title: profile,
          bars: rows(table)
            .filter((row) => !row.get('client').startsWith('the link itself'))
            .map((row) => ({
              label: shortName(row.get('client')),
              value: number(row.get('fraction of link')),
              text: row.get('fraction of link'),
              kind: kindOf(row.get('client')),
            })),
        }),
      )
    if (groups.length === 0) return []
    return [
      {
        name: `network-${runtime.toLowerCase()}`,
        chart: {
          title: `${runtime}, ${size} MiB over emulated links: fraction of the link`,
          description: `Each client's MB/s over the link's line rate (the Wi-Fi profile counts the time its link was up), ${size} MiB, 5 MiB parts, 4 in flight, cold connections. Longer is better.`,
          unit: '% of the link',
          max: 100,
          groups,
          references: [{ value: 95, label: 'goal: 95% of the link' }],
          footnote: 'bench/RESULTS.md, section 7 (npm run bench -- network)',
        },
      },
    ]
  })

/** The short names a chart can fit, from the tables' row labels. */
export function shortName(label: string): string {
  const plain = label.replace(/`/g, '')
  const known: Array<[RegExp, string]> = [
    [/^the link itself/, 'the link'],
    [/^Updraft React UI/, 'Updraft UploadDropzone + UploadButton'],
    [/lib-storage/, '@aws-sdk/lib-storage'],
    [/^@uppy\/core/, '@uppy/core + @uppy/aws-s3'],
    [/^@uppy\/aws-s3/, '@uppy/aws-s3'],
    [/^next-s3-upload/, 'next-s3-upload useS3Upload'],
    [/^ceiling: raw parallel fetch/, 'ceiling: raw fetch PUTs'],
    [/^ceiling: raw parallel node:http/, 'ceiling: raw node:http PUTs'],
    [/^ceiling: raw parallel XHR/, 'ceiling: raw XHR PUTs'],
    [/^Updraft over fetch/, 'Updraft over fetch'],
    [/^Updraft \(Node default transport: node:http\)/, 'Updraft (node:http, the default)'],
    [/^Updraft \(XHR/, 'Updraft (XHR)'],
    [/^Updraft token mode/, 'Updraft, token mode'],
    [/^Updraft presigned mode/, 'Updraft, presigned mode'],
  ]
  return known.find(([pattern]) => pattern.test(plain))?.[1] ?? plain.replace(/\s+\(.*\)$/, '')
}

const kindOf = (client: string): Bar['kind'] =>
  client.startsWith('Updraft') ? 'updraft' : client.startsWith('ceiling') ? 'ceiling' : 'peer'

const find = (tables: readonly Table[], title: RegExp) => tables.find((table) => title.test(table.title))

/** A table row whose cells are read by column name. */
type Row = { get(column: string): string }

/** A table's rows with cells by column name (tables name their columns; their order may change). */
function rows(table: Table): Row[] {
  return table.rows.map((row) => ({
    get(column: string): string {
      const index = table.columns.indexOf(column)
      if (index < 0)
        throw new Error(
          `chart: table "${table.title}" has no column "${column}" (columns: ${table.columns.join(', ')})`,
        )
      return row[index]!.replace(/\*\*/g, '')
    },
  }))
}

/** "1.41x" → 1.41, "86.7%" → 86.7, "1,118" → 1118. */
function number(cell: string): number {
  const value = Number.parseFloat(cell.replace(/[,*]/g, ''))
  if (!Number.isFinite(value)) throw new Error(`chart: "${cell}" is not a number`)
  return value
}
