import type { BenchContext, Benchmark, Section } from './report.ts'

/** Runs one benchmark and stamps its name, title, charts and duration on what it returns. */
export async function runBenchmark(benchmark: Benchmark, context: BenchContext): Promise<Section> {
  const start = performance.now()
  const result = await benchmark.run(context)
  const seconds = (performance.now() - start) / 1000
  return {
    name: benchmark.name,
    title: benchmark.title,
    ...result,
    charts: benchmark.charts?.(result.tables) ?? [],
    seconds,
  }
}
