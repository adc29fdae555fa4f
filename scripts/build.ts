// `npm run build`: the package as users install it. tsc emits ESM JavaScript, .d.ts and source
// maps (sources inlined) into dist/lib (tsconfig.build.json); then dist/lib gets a package.json
// of its own.
//
// Why a nested package.json: Node and bundlers resolve `#default-transport` (engine/transport/exchange.ts)
// through the *nearest* package.json of the importing file. The root one maps it onto the .ts
// sources, which the repository's tests, demo and benchmarks run; the built files find this one,
// which maps the same conditions onto the built .js files. It also says `type: module` and
// `sideEffects` (none, but stylesheets) for the files beside it, as the root one does.
import { execFileSync } from 'node:child_process'
import { copyFile, mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { EXAMPLES_DIR, QUICK_STARTS, templateFiles } from '../cli/init.ts'
import { type BuildOutcome, buildWhenStale } from './fresh-build.ts'

export const ROOT = fileURLToPath(new URL('..', import.meta.url))
export const LIB_DIR = join(ROOT, 'dist', 'lib')
/** Written last by a build: its age is the build's. */
const LIB_SCOPE = join(LIB_DIR, 'package.json')
/** What the package is built from. */
export const PACKAGE_SOURCES = [
  'protocol',
  'engine',
  'server',
  'src',
  'cli',
  'types',
  'examples',
  'package.json',
  'tsconfig.json',
  'tsconfig.build.json',
  'scripts/build.ts',
].map((path) => join(ROOT, path))
const LOCK_FILE = join(ROOT, 'dist', '.lib-build.lock')
/** Files the package ships as they are, beside the built scripts. */
const STYLESHEETS = ['src/ui/styles.css']

/** Builds dist/lib unless it is newer than every source; one process at a time. */
export function ensurePackageBuilt(log?: (message: string) => void): Promise<BuildOutcome> {
  return buildWhenStale({ output: LIB_SCOPE, sources: PACKAGE_SOURCES, lockFile: LOCK_FILE, log, build: emit })
}

async function emit(): Promise<void> {
  await rm(LIB_DIR, { recursive: true, force: true })
  const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc')
  execFileSync(process.execPath, [tsc, '-p', join(ROOT, 'tsconfig.build.json')], { stdio: 'inherit' })
  // tsc emits scripts only: the components' stylesheet (`updraft-s3/react/ui/styles.css`) is copied.
  for (const stylesheet of STYLESHEETS) await copyFile(join(ROOT, stylesheet), join(LIB_DIR, stylesheet))
  // The quick starts `npx updraft-s3 init` writes: the examples' own files, beside cli/ as in the repository.
  for (const { folder } of Object.values(QUICK_STARTS)) {
    for (const path of await templateFiles(join(EXAMPLES_DIR, folder))) {
      await mkdir(dirname(join(LIB_DIR, 'examples', folder, path)), { recursive: true })
      await copyFile(join(EXAMPLES_DIR, folder, path), join(LIB_DIR, 'examples', folder, path))
    }
  }
  const root = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { imports: Record<string, Targets> }
  const scope = {
    type: 'module',
    // Stylesheets are imported for their effect alone: a bundler must keep them.
    sideEffects: ['*.css'],
    imports: Object.fromEntries(Object.entries(root.imports).map(([name, target]) => [name, toBuilt(target)])),
  }
  await writeFile(LIB_SCOPE, `${JSON.stringify(scope, null, 2)}\n`)
}

type Targets = string | { [condition: string]: Targets }

const toBuilt = (target: Targets): Targets =>
  typeof target === 'string'
    ? target.replace(/\.tsx?$/, '.js')
    : Object.fromEntries(Object.entries(target).map(([condition, inner]) => [condition, toBuilt(inner)]))

// `tsx scripts/build.ts` (npm run build, prepack) always builds, under the same lock.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await rm(LIB_SCOPE, { force: true })
  await ensurePackageBuilt((line) => console.log(line))
}
