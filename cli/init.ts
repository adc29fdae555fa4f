// `npx updraft-s3 init <framework>`: writes a quick start's files into the current folder, so a
// quick start needs the installed package and nothing else. The files are the repository's
// examples/ folders themselves: the build copies them into the package (dist/lib/examples), at the
// same place relative to this module, so the package and the repository read one source.
import { existsSync } from 'node:fs'
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The quick starts, by the name `init` takes: the example folder, and what to run once installed. */
export const QUICK_STARTS = {
  next: {
    folder: 'nextjs',
    run: 'npm run build && npm start   # or npm run dev; the page and the upload API on http://localhost:3000',
  },
  fastify: {
    folder: 'fastify',
    run: 'npm run build && npm start   # the page and the upload API on http://localhost:3000',
  },
  hono: { folder: 'hono', run: 'npm run build && npm start   # the page and the upload API on http://localhost:3000' },
  worker: {
    folder: 'worker',
    run: 'npx wrangler dev   # with the S3_UPLOAD_* settings in .dev.vars; the page and the upload API on http://localhost:8787',
  },
} as const

export type QuickStart = keyof typeof QUICK_STARTS

/** The examples, in the repository (cli/../examples) and in the package (dist/lib/cli/../examples). */
export const EXAMPLES_DIR = fileURLToPath(new URL('../examples/', import.meta.url))

/** What an example folder holds that is no part of its source: installs, builds, local secrets. */
const NOT_SOURCE =
  /(^|\/)(node_modules|dist|\.next|\.wrangler|\.dev\.vars|\.gitignore|package-lock\.json|next-env\.d\.ts)$|(^|\/)public\/page\.js$/

/** The source files of an example folder, relative to it, sorted; package.json among them. */
export async function templateFiles(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { recursive: true, withFileTypes: true })
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => relative(folder, join(entry.parentPath, entry.name)).split('\\').join('/'))
    .filter((path) => !path.split('/').some((_, i, parts) => NOT_SOURCE.test(parts.slice(0, i + 1).join('/'))))
    .sort()
}

interface Manifest {
  type?: string
  scripts?: Record<string, string>
  dependencies?: Record<string, string>
  devDependencies?: Record<string, string>
  peerDependencies?: Record<string, string>
  [field: string]: unknown
}

export interface InitPlan {
  /** Files to write (relative path → text), package.json included when it changes. */
  writes: Map<string, string>
  /** Files already there with the same text. */
  unchanged: string[]
  /** What would be overwritten: a file with other text, a script with another command, another "type". */
  conflicts: string[]
  /** The template's packages that package.json does not list yet: `npm install` them. */
  missing: { dependencies: string[]; devDependencies: string[] }
}

/**
 * What `init` would do in `target` for `quickStart`: the template's files, and package.json given
 * the template's "type" and scripts (its dependencies are never written: `init` lists the missing
 * ones for `npm install`, which picks their versions and installs them).
 */
export async function planInit(quickStart: QuickStart, target: string, examples = EXAMPLES_DIR): Promise<InitPlan> {
  const folder = join(examples, QUICK_STARTS[quickStart].folder)
  const plan: InitPlan = {
    writes: new Map(),
    unchanged: [],
    conflicts: [],
    missing: { dependencies: [], devDependencies: [] },
  }
  for (const path of await templateFiles(folder)) {
    if (path === 'package.json') continue
    const text = await readFile(join(folder, path), 'utf8')
    const existing = await readFile(join(target, path), 'utf8').catch(() => undefined)
    if (existing === text) plan.unchanged.push(path)
    else {
      if (existing !== undefined) plan.conflicts.push(path)
      plan.writes.set(path, text)
    }
  }

  const template = JSON.parse(await readFile(join(folder, 'package.json'), 'utf8')) as Manifest
  const hadManifest = existsSync(join(target, 'package.json'))
  const manifest: Manifest = hadManifest
    ? JSON.parse(await readFile(join(target, 'package.json'), 'utf8'))
    : { private: true }
  let changed = !hadManifest
  if (manifest.type !== template.type) {
    if (manifest.type !== undefined)
      plan.conflicts.push(`package.json "type" (${manifest.type}; the files need ${template.type})`)
    manifest.type = template.type
    changed = true
  }
  const scripts = { ...manifest.scripts }
  for (const [name, command] of Object.entries(template.scripts ?? {})) {
    if (scripts[name] === command) continue
    if (scripts[name] !== undefined)
      plan.conflicts.push(`package.json script "${name}" (${scripts[name]}; the quick start's is ${command})`)
    scripts[name] = command
    changed = true
  }
  manifest.scripts = scripts
  if (changed) plan.writes.set('package.json', `${JSON.stringify(manifest, null, 2)}\n`)
  else plan.unchanged.push('package.json')

  const listed = { ...manifest.dependencies, ...manifest.devDependencies, ...manifest.peerDependencies }
  for (const kind of ['dependencies', 'devDependencies'] as const) {
    plan.missing[kind] = Object.keys(template[kind] ?? {}).filter((name) => !(name in listed))
  }
  return plan
}

/** `init`: plans, refuses to overwrite anything unless `force`, writes, and says what to run next. Resolves with the exit code. */
export async function runInit(
  quickStart: QuickStart,
  target: string,
  force: boolean,
  print: (line: string) => void,
): Promise<number> {
  const plan = await planInit(quickStart, target)
  if (plan.conflicts.length > 0 && !force) {
    print(`updraft-s3 init ${quickStart}: nothing was written; these would be overwritten:`)
    for (const conflict of plan.conflicts) print(`  ${conflict}`)
    print('Run it in an empty folder, or add --force to overwrite them.')
    return 1
  }
  for (const [path, text] of plan.writes) {
    await mkdir(dirname(join(target, path)), { recursive: true })
    await writeFile(join(target, path), text)
    print(`  wrote ${path}${plan.conflicts.some((conflict) => conflict.startsWith(path)) ? ' (overwritten)' : ''}`)
  }
  for (const path of plan.unchanged) print(`  kept  ${path} (already the same)`)
  print('')
  const { dependencies, devDependencies } = plan.missing
  if (dependencies.length > 0 || devDependencies.length > 0) {
    print('Install what package.json does not list yet:')
    if (dependencies.length > 0) print(`  npm install ${dependencies.join(' ')}`)
    if (devDependencies.length > 0) print(`  npm install -D ${devDependencies.join(' ')}`)
  }
  print('With the S3_UPLOAD_* settings in the environment (npx updraft-s3 doctor checks them), run:')
  print(`  ${QUICK_STARTS[quickStart].run}`)
  return 0
}
