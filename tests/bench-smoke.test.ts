// Every benchmark in bench/ runs here once on a tiny size, so none of them rots between full
// runs. Asserts that each one runs and yields well-formed tables; never a speed (speed belongs to
// `npm run bench`, on a quiet machine).
import { describe, expect, inject, it } from 'vitest'
import { benchmarks } from '../bench/benchmarks.ts'
import { barChart } from '../bench/lib/chart.ts'
import { isWellFormed, markdownSection } from '../bench/lib/report.ts'
import { runBenchmark } from '../bench/lib/run-one.ts'

describe('benchmarks on a tiny size', () => {
  it('are the six of issue 5, the Node-by-body one of issue 28, the network one of issue 16, the first-byte one of issue 32, the many-files one of issue 34 and the images one of issue 37', () => {
    expect(benchmarks.map((benchmark) => benchmark.name)).toEqual([
      'bundle',
      'throughput',
      'node',
      'concurrency',
      'browser',
      'memory',
      'upload-api',
      'network',
      'first-byte',
      'many-files',
      'images',
    ])
  })

  it.each(benchmarks.map((benchmark) => [benchmark.name, benchmark] as const))(
    '%s runs and yields well-formed tables',
    async (_, benchmark) => {
      const section = await runBenchmark(benchmark, { quick: true, log: () => {}, rgw: inject('rgw') })

      expect(section.tables.length).toBeGreaterThan(0)
      for (const table of section.tables) expect(isWellFormed(table), table.title).toBe(true)
      for (const goal of section.goals) {
        expect(goal.goal).not.toBe('')
        expect(goal.figure).not.toMatch(/NaN|n\/a|undefined/)
      }
      for (const table of section.tables)
        for (const row of table.rows) for (const cell of row) expect(cell).not.toMatch(/NaN|undefined/)
      expect(markdownSection(section)).toContain(`## ${benchmark.title}`)
      // The charts `npm run bench` writes to bench/charts/, drawn from these tables.
      if (benchmark.charts) expect(section.charts.length).toBeGreaterThan(0)
      for (const { name, chart } of section.charts) {
        const svg = barChart(chart)
        const bars = chart.groups.flatMap((group) => group.bars)
        expect(bars.length, name).toBeGreaterThan(0)
        for (const bar of bars) expect(Number.isFinite(bar.value), `${name}: ${bar.label}`).toBe(true)
        expect(svg.match(/<rect [^>]*><title>/g), name).toHaveLength(bars.length)
      }
    },
    180_000,
  )
})
