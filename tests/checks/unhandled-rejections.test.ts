// Issue 11 asks that every test file fail on an unhandled rejection. Vitest does so by default
// (the run reports "Unhandled Rejection" naming the file, and exits 1); this checks nothing in the
// project's config turns that off (`dangerouslyIgnoreUnhandledErrors`, a process handler), by
// running a file whose only test passes but leaves a rejection nobody handles.
import { execFile } from 'node:child_process'
import { rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { expect, it } from 'vitest'

it('a passing test that leaves an unhandled rejection fails the run', async () => {
  // Under tests/unit so the unit lane's own include pattern and settings (threads that keep their
  // modules, the least isolated of the lanes) apply; removed at once.
  const name = `unhandled-${process.pid}-${Date.now()}.test.ts`
  const file = join(import.meta.dirname, '../unit', name)
  await writeFile(
    file,
    `import { expect, it } from 'vitest'
it('passes', async () => {
  void Promise.reject(new Error('nobody handles me'))
  await new Promise((resolve) => setTimeout(resolve, 20))
  expect(1).toBe(1)
})
`,
  )
  try {
    const run = await promisify(execFile)('npx', ['vitest', 'run', '--project', 'unit', `tests/unit/${name}`], {
      cwd: join(import.meta.dirname, '../..'),
    }).then(
      (output) => ({ code: 0, ...output }),
      (error: { code: number; stdout: string; stderr: string }) => error,
    )
    expect(run.code).toBe(1)
    expect(run.stdout + run.stderr).toContain('nobody handles me')
  } finally {
    await rm(file, { force: true })
  }
}, 60_000)
