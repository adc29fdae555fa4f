import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { type BuildOutcome, buildWhenStale } from '../scripts/fresh-build.ts'

/** The repository root: demo/ sits right under it. */
export const PROJECT_ROOT = fileURLToPath(new URL('..', import.meta.url))
/** Where `vite build` (vite.config.ts) writes the demo page. */
export const DEMO_DIR = join(PROJECT_ROOT, 'dist', 'demo')

/** What the page is built from: its own sources, the React layer, the engine and protocol it bundles, and the Vite config. */
const SOURCES = ['demo/page', 'src', 'engine', 'protocol', 'vite.config.ts'].map((path) => join(PROJECT_ROOT, path))

export type DemoBuild = BuildOutcome

/** Builds dist/demo with Vite's `build()` when it is missing or older than any source file. */
export function ensureDemoBuilt(log: (message: string) => void = () => {}): Promise<DemoBuild> {
  return buildWhenStale({
    output: join(DEMO_DIR, 'index.html'),
    sources: SOURCES,
    lockFile: join(PROJECT_ROOT, 'dist', '.demo-build.lock'),
    log,
    async build() {
      log('Building the demo page (dist/demo)…')
      // Imported here: a start with a fresh build never loads Vite.
      const { build } = await import('vite')
      await build({ configFile: join(PROJECT_ROOT, 'vite.config.ts'), logLevel: 'warn', mode: 'production' })
    },
  })
}
