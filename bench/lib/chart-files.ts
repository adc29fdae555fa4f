// bench/charts/<name>.svg from RESULTS.md's tables: each stored section is matched to its benchmark
// by title and drawn with that benchmark's chart spec, the one a fresh run uses.
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { benchmarks } from '../benchmarks.ts'
import { barChart } from './chart.ts'
import type { ChartFile } from './chart-specs.ts'
import { BENCH_DIR } from './child.ts'
import { parseResults } from './results-file.ts'

export const CHART_DIR = join(BENCH_DIR, 'charts')

/** The charts of every section RESULTS.md holds. */
export function chartsOf(results: string): ChartFile[] {
  return parseResults(results).flatMap(
    (stored) => benchmarks.find((benchmark) => benchmark.title === stored.title)?.charts?.(stored.tables) ?? [],
  )
}

/** Writes them to bench/charts/ and returns the paths written. */
export function writeCharts(results: string, directory = CHART_DIR): string[] {
  mkdirSync(directory, { recursive: true })
  return chartsOf(results).map(({ name, chart }) => {
    const file = join(directory, `${name}.svg`)
    writeFileSync(file, barChart(chart))
    return file
  })
}
