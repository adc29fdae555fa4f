import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The repository root: demo/ sits right under it. */
export const PROJECT_ROOT = fileURLToPath(new URL('..', import.meta.url))
/** Where `vite build` (vite.config.ts) writes the demo page. */
export const DEMO_DIR = join(PROJECT_ROOT, 'dist', 'demo')

/** What the page is built from: its own sources, the React layer, the engine and protocol it bundles, and the Vite config. */
const SOURCES = ['demo/page', 'src', 'engine', 'protocol', 'vite.config.ts']
/** Holds the building process's pid. */
const LOCK_FILE = join(PROJECT_ROOT, 'dist', '.demo-build.lock')

export type DemoBuild = 'up to date' | 'built'

/**
 * Builds dist/demo with Vite's `build()` when it is missing or older than any source file.
 * Test files start the app in parallel processes, so a build holds a lock file (created
 * exclusively): two builds into one `emptyOutDir` folder would delete each other's files.
 */
export async function ensureDemoBuilt(log: (message: string) => void = () => {}): Promise<DemoBuild> {
  if (await isFresh()) return 'up to date'
  await acquireLock(log)
  try {
    // Another process may have built it while this one waited.
    if (await isFresh()) return 'up to date'
    log('Building the demo page (dist/demo)…')
    // Imported here: a start with a fresh build never loads Vite.
    const { build } = await import('vite')
    await build({ configFile: join(PROJECT_ROOT, 'vite.config.ts'), logLevel: 'warn', mode: 'production' })
    return 'built'
  } finally {
    await rm(LOCK_FILE, { force: true })
  }
}

async function isFresh(): Promise<boolean> {
  const built = await mtime(join(DEMO_DIR, 'index.html'))
  if (built === undefined) return false
  const newest = Math.max(...(await Promise.all(SOURCES.map((path) => newestMtime(join(PROJECT_ROOT, path))))))
  return built >= newest
}

async function acquireLock(log: (message: string) => void): Promise<void> {
  await mkdir(join(PROJECT_ROOT, 'dist'), { recursive: true })
  for (let attempt = 0; ; attempt++) {
    try {
      await writeFile(LOCK_FILE, String(process.pid), { flag: 'wx' })
      return
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    }
    const holder = Number(await readFile(LOCK_FILE, 'utf8').catch(() => ''))
    // A lock whose process is gone was left by a build that died (e.g. killed): take it over.
    if (holder > 0 && !isAlive(holder)) {
      await rm(LOCK_FILE, { force: true })
      continue
    }
    if (attempt === 0) log(`Waiting for another build of the demo page (pid ${holder || '?'})…`)
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

const mtime = async (path: string) => (await stat(path).catch(() => undefined))?.mtimeMs
