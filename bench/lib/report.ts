import type { ChartFile, ChartSpec } from './chart-specs.ts'

/** What every benchmark returns: Markdown-ready tables, goals with their figures, and notes. */
export interface Table {
  title: string
  columns: string[]
  rows: string[][]
}

export interface Goal {
  goal: string
  figure: string
  met: boolean
  /** For the closing note: why it is missed and what would close it (or what made it). */
  note?: string
}

export interface Section {
  name: string
  title: string
  tables: Table[]
  goals: Goal[]
  notes: string[]
  /** One-line headline ratios for the top of RESULTS.md and the README. */
  headlines: string[]
  /** Drawn from `tables` by the benchmark's `charts` (bench/lib/chart-specs.ts), for bench/charts/. */
  charts: ChartFile[]
  seconds: number
}

export interface RgwAccess {
  endpoint: string
  region: string
  credentials: { accessKeyId: string; secretAccessKey: string }
  bucket: string
  /** When the cluster is ours: its state dir, so deleted objects can be garbage-collected at once. */
  stateDir?: string
}

export interface BenchContext {
  /** Tiny sizes and one repetition: proves the benchmark runs (tests/bench-smoke.test.ts). */
  quick: boolean
  log(message: string): void
  /** A running RGW to use instead of starting one (the test run's global one). */
  rgw?: RgwAccess
}

export interface Benchmark {
  name: string
  title: string
  run(context: BenchContext): Promise<Omit<Section, 'name' | 'title' | 'seconds' | 'charts'>>
  /** The charts of its tables: run on a fresh run's tables and on those RESULTS.md holds. */
  charts?: ChartSpec
}

export const MiB = 1024 * 1024

export function median(values: readonly number[]): number {
  if (values.length === 0) return NaN
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

/** The contenders of round `round`, rotated so that none always runs first (or last). */
export const rotate = <T>(items: readonly T[], round: number): T[] =>
  items.map((_, i) => items[(i + round) % items.length]!)

export const fixed = (value: number, digits = 0) => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a')
export const ratio = (value: number) => (Number.isFinite(value) ? `${value.toFixed(2)}x` : 'n/a')
export const mib = (bytes: number, digits = 0) => fixed(bytes / MiB, digits)
export const mbps = (bytes: number, seconds: number) => bytes / 1e6 / seconds

export function markdownTable({ title, columns, rows }: Table): string {
  const escapeCell = (cell: string) => cell.replace(/\|/g, '\\|')
  const numeric = columns.map(
    (_, c) => rows.length > 0 && rows.every((row) => /^(\*\*)?[-+~]?[\d.,]+(x|%)?(\*\*)?$|^n\/a$/.test(row[c] ?? '')),
  )
  const lines = [
    `| ${columns.map(escapeCell).join(' | ')} |`,
    `|${numeric.map((right) => (right ? '---:' : '---')).join('|')}|`,
    ...rows.map((row) => `| ${row.map(escapeCell).join(' | ')} |`),
  ]
  return `**${title}**\n\n${lines.join('\n')}`
}

export function markdownSection(section: Section): string {
  // bench/charts/ sits beside RESULTS.md; GitHub shows the SVG through <img>, the alt text is its title.
  const charts = section.charts.map(({ name, chart }) => `![${chart.title}](charts/${name}.svg)`)
  const parts = [`## ${section.title}`, ...charts, ...section.tables.map(markdownTable)]
  if (section.goals.length > 0) {
    parts.push(
      markdownTable({
        title: 'Goals',
        columns: ['goal', 'figure', 'status'],
        rows: section.goals.map((goal) => [goal.goal, goal.figure, goal.met ? 'met' : 'MISSED']),
      }),
    )
  }
  if (section.notes.length > 0) parts.push(section.notes.map((note) => `- ${note}`).join('\n'))
  parts.push(`_${fixed(section.seconds, 0)} s_`)
  return parts.join('\n\n')
}

/** A table is well formed when it has columns and rows, every row as wide as the header. */
export function isWellFormed(table: Table): boolean {
  return (
    table.title.length > 0 &&
    table.columns.length > 0 &&
    table.rows.length > 0 &&
    table.rows.every(
      (row) => row.length === table.columns.length && row.every((cell) => typeof cell === 'string' && cell.length > 0),
    )
  )
}
