// The size budget as a CI gate: `npx tsx bench/size-check.ts` exits 1 when a browser path is over
// its gzip budget (ARCHITECTURE.md, "Size discipline"), naming the figure and where the bytes go.
// Measured on the built package (dist/lib, through package.json `exports`), built first if stale.
import { ensurePackageBuilt } from '../scripts/build.ts'
import { BUDGETS, measureBundle, UPDRAFT_ENTRIES } from './lib/bundle.ts'

await ensurePackageBuilt()

let over = false
for (const { entry, limit, allLimit, what } of BUDGETS) {
  const size = await measureBundle(UPDRAFT_ENTRIES[entry])
  const ok = size.gzip <= limit && (allLimit === undefined || size.allGzip <= allLimit)
  over ||= !ok
  const all = allLimit === undefined ? '' : `; with its lazy chunks ${size.allGzip} B (budget ${allLimit} B)`
  console.log(
    `${ok ? 'ok  ' : 'OVER'} ${what}: ${size.gzip} B gzip with the page (budget ${limit} B)${all}, ${size.min} B min, ${size.brotli} B brotli`,
  )
  if (!ok) {
    for (const { path, bytes, lazy } of size.inputs.slice(0, 10))
      console.log(`       ${String(bytes).padStart(6)} B min  ${path}${lazy ? ' (lazy)' : ''}`)
  }
}
process.exitCode = over ? 1 : 0
