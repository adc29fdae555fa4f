// `npm run bench` runs every benchmark and writes bench/RESULTS.md and bench/charts/*.svg;
// `npm run bench -- NAME...` runs only those and prints their tables. `--quick`: tiny sizes (what
// tests/bench-smoke runs). `--update` with names: splice those sections into RESULTS.md (the others
// keep their runs) and redraw the charts. `--charts` alone: redraw bench/charts/ from the tables
// RESULTS.md holds, without running anything.
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { benchmarks } from './benchmarks.ts'
import { writeCharts } from './lib/chart-files.ts'
import { BENCH_DIR } from './lib/child.ts'
import { loadAverage, machineLines } from './lib/machine.ts'
import { markdownSection, type Section } from './lib/report.ts'
import { spliceSection } from './lib/results-file.ts'
import { runBenchmark } from './lib/run-one.ts'

const args = process.argv.slice(2)
const quick = args.includes('--quick')
const update = args.includes('--update')
const resultsFile = join(BENCH_DIR, 'RESULTS.md')
if (args.includes('--charts')) {
  for (const file of writeCharts(readFileSync(resultsFile, 'utf8'))) console.error(`wrote ${file}`)
  process.exit(0)
}
const names = args.filter((arg) => !arg.startsWith('--'))
const unknown = names.filter((name) => !benchmarks.some((benchmark) => benchmark.name === name))
if (unknown.length > 0) {
  console.error(`Unknown benchmark ${unknown.join(', ')}; choose from ${benchmarks.map((b) => b.name).join(', ')}`)
  process.exit(2)
}
if (update && (names.length === 0 || quick)) {
  console.error('--update splices named benchmarks into RESULTS.md: give their names, without --quick')
  process.exit(2)
}
const chosen = names.length > 0 ? benchmarks.filter((benchmark) => names.includes(benchmark.name)) : benchmarks

const started = new Date()
const loadBefore = loadAverage()
const sections: Section[] = []
for (const benchmark of chosen) {
  console.error(`# ${benchmark.title}`)
  const section = await runBenchmark(benchmark, { quick, log: (message) => console.error(`  ${message}`) })
  sections.push(section)
  console.log(`${markdownSection(section)}\n`)
}

const header = [
  '# Benchmark results',
  '',
  `Run ${started.toISOString().slice(0, 16).replace('T', ' ')} UTC with \`npm run bench\`${quick ? ' --quick' : ''}, ${((Date.now() - started.getTime()) / 60_000).toFixed(1)} min.`,
  '',
  ...machineLines().map((line) => `- ${line}`),
  `- Load average (1/5/15 min) at start ${loadBefore}, at end ${loadAverage()}: the 2 cores are shared with other sessions' test runs, so absolute figures are noisy; compare the ratios, measured within the same rounds.`,
  '',
  '## Headlines',
  '',
  ...sections.flatMap((section) => section.headlines.map((line) => `- ${line}`)),
  '',
  '## Goals',
  '',
  '| benchmark | goal | figure | status |',
  '|---|---|---|---|',
  ...sections.flatMap((section) =>
    section.goals.map((goal) => `| ${section.name} | ${goal.goal} | ${goal.figure} | ${goal.met ? 'met' : 'MISSED'} |`),
  ),
  '',
  '## Closing note',
  '',
  ...sections.flatMap((section) =>
    section.goals.map(
      (goal) =>
        `- **${goal.met ? 'Met' : 'Missed'}: ${goal.goal}** (${goal.figure}).${goal.note ? ` ${goal.note}` : ''}`,
    ),
  ),
  '',
].join('\n')
console.log(header)

if (names.length === 0 && !quick) {
  writeFileSync(resultsFile, `${header}\n${sections.map(markdownSection).join('\n\n')}\n`)
  console.error(`wrote ${resultsFile}`)
}
if (update) {
  const code = machineLines()[3]!.replace(/^Code: /, '')
  const when = started.toISOString().slice(0, 16).replace('T', ' ')
  let results = readFileSync(resultsFile, 'utf8')
  for (const section of sections) {
    const provenance = `_From \`npm run bench -- ${section.name} --update\`, ${when} UTC: ${code}, Node ${process.version}, load average at start ${loadBefore}. The machine lines at the top are the full run's; other sections say where they differ._`
    results = spliceSection(results, section, provenance)
  }
  writeFileSync(resultsFile, results)
  console.error(`updated ${sections.map((section) => section.name).join(', ')} in ${resultsFile}`)
}
if ((names.length === 0 && !quick) || update) {
  // Drawn from the file just written, so a full run and a redraw (--charts) give the same charts.
  for (const file of writeCharts(readFileSync(resultsFile, 'utf8'))) console.error(`wrote ${file}`)
}
// Chromium, s3rver and sockets are closed by each benchmark; nothing else should keep Node alive.
process.exit(0)
