import type { BenchContext, Benchmark, Section } from './report.ts'

/** Runs one benchmark and stamps its name, title and duration on what it returns. */
export async function runBenchmark(benchmark: Benchmark, context: BenchContext): Promise<Section> {
  const start = performance.now()
  const result = await benchmark.run(context)
  return { name: benchmark.name, title: benchmark.title, ...result, seconds: (performance.now() - start) / 1000 }
}
