// One build at a time, and only when stale: test files run in parallel processes, and each may
// need the demo page, the built package or its tarball. Two builds into one folder would delete
// each other's files, so a build holds a lock file (created exclusively) while it runs.
import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'

export interface StaleBuild {
  /** A file the build writes last: its age says whether the build is fresh. */
  output: string
  /** Files and folders (searched recursively) the build reads. */
  sources: string[]
  /** Held (with the holder's pid) while the build runs. */
  lockFile: string
  build(): Promise<void>
  /** Told "Waiting for another build…" when the lock is taken. */
  log?: (message: string) => void
}

export type BuildOutcome = 'up to date' | 'built'

/** Runs `build()` when `output` is missing or older than any of `sources`, one process at a time. */
export async function buildWhenStale(job: StaleBuild): Promise<BuildOutcome> {
  if (await isFresh(job)) return 'up to date'
  await acquireLock(job.lockFile, job.log ?? (() => {}))
  try {
    // Another process may have built it while this one waited.
    if (await isFresh(job)) return 'up to date'
    await job.build()
    return 'built'
  } finally {
    await rm(job.lockFile, { force: true })
  }
}

async function isFresh({ output, sources }: StaleBuild): Promise<boolean> {
  const built = (await stat(output).catch(() => undefined))?.mtimeMs
  if (built === undefined) return false
  const newest = Math.max(...(await Promise.all(sources.map(newestMtime))))
  return built >= newest
}

async function acquireLock(lockFile: string, log: (message: string) => void): Promise<void> {
  await mkdir(dirname(lockFile), { recursive: true })
  for (let attempt = 0; ; attempt++) {
    try {
      await writeFile(lockFile, String(process.pid), { flag: 'wx' })
      return
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    }
    const holder = Number(await readFile(lockFile, 'utf8').catch(() => ''))
    // A lock whose process is gone was left by a build that died (e.g. killed): take it over.
    if (holder > 0 && !isAlive(holder)) {
      await rm(lockFile, { force: true })
      continue
    }
    if (attempt === 0) log(`Waiting for another build (pid ${holder || '?'})…`)
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0) // signal 0: only checks that the process exists
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** The newest modification time under `path` (a file or a folder, recursively); 0 if absent. */
async function newestMtime(path: string): Promise<number> {
  const info = await stat(path).catch(() => undefined)
  if (!info) return 0
  if (!info.isDirectory()) return info.mtimeMs
  const entries = await readdir(path)
  const times = await Promise.all(entries.map((name) => newestMtime(join(path, name))))
  return Math.max(info.mtimeMs, ...times)
}
