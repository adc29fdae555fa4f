// The package as a user gets it: `npm pack`, then an install into a fresh project, offline.
//
// Offline, because a test must not depend on what the registry serves today: every package the
// projects need is a dependency of this repository too, so `npm ci` has put its tarball in the
// npm cache. A fresh project has no lockfile, and `npm install --offline` would then need the
// registry's package documents, which `npm ci` does not cache; so the project starts from this
// repository's lockfile (exact versions and integrity hashes), and npm prunes what it does not use.
import { execFile } from 'node:child_process'
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { buildWhenStale } from '../../scripts/fresh-build.ts'
import { ensurePackageBuilt, LIB_DIR, ROOT } from '../../scripts/build.ts'

const run = promisify(execFile)
const PACK_DIR = join(ROOT, 'tests', 'artifacts', 'package')

interface PackageJson {
  name?: string
  version: string
  dependencies?: Record<string, string>
  devDependencies?: Record<string, string>
}

const readJson = async <T>(path: string) => JSON.parse(await readFile(path, 'utf8')) as T

/** `npm pack` of the built package (built first when stale); one pack per source change, shared by parallel test files. */
export async function packTarball(): Promise<string> {
  await ensurePackageBuilt()
  const { version } = await readJson<PackageJson>(join(ROOT, 'package.json'))
  const tarball = join(PACK_DIR, `updraft-${version}.tgz`)
  await buildWhenStale({
    output: tarball,
    sources: [LIB_DIR, join(ROOT, 'package.json'), join(ROOT, 'README.md')],
    lockFile: join(PACK_DIR, '.pack.lock'),
    // --ignore-scripts: prepack would rebuild dist/lib, which other test files may be reading.
    build: () => npm(ROOT, ['pack', '--ignore-scripts', '--pack-destination', PACK_DIR]).then(() => {}),
  })
  return tarball
}

/** The paths inside the tarball (`package/` stripped), as `npm pack --dry-run` lists them. */
export async function tarballFiles(): Promise<string[]> {
  const { stdout } = await npm(ROOT, ['pack', '--dry-run', '--json', '--ignore-scripts'])
  const [report] = JSON.parse(stdout) as Array<{ files: Array<{ path: string }> }>
  return report!.files.map(({ path }) => path).sort()
}

export interface InstalledProject {
  dir: string
  remove(): Promise<void>
}

/**
 * Copies `template` (an example app, or an empty folder) to a fresh temporary folder and runs
 * `npm install --offline` there with `updraft` taken from the packed tarball. `extraDependencies`
 * are added as devDependencies at this repository's versions (e.g. the TypeScript a check needs).
 */
export async function installProject(template: string | undefined, extraDependencies: string[] = []): Promise<InstalledProject> {
  const tarball = await packTarball()
  const dir = await mkdtemp(join(tmpdir(), 'updraft-consumer-'))
  try {
    if (template) await cp(template, dir, { recursive: true, filter: (path) => !/[\\/](node_modules|dist|\.next)$/.test(path) })
    const repo = await readJson<PackageJson>(join(ROOT, 'package.json'))
    const pinned = { ...repo.dependencies, ...repo.devDependencies }
    const project = template ? await readJson<PackageJson>(join(dir, 'package.json')) : { name: 'consumer', version: '0.0.0' }
    const dependencies = { ...project.dependencies, updraft: `file:${tarball}` }
    const devDependencies = { ...project.devDependencies }
    for (const name of extraDependencies) {
      if (!pinned[name]) throw new Error(`installProject: ${name} is not a dependency of this repository, so it is not in the npm cache`)
      devDependencies[name] = pinned[name]
    }
    await writeFile(join(dir, 'package.json'), JSON.stringify({ ...project, private: true, type: 'module', dependencies, devDependencies }, null, 2))
    const lock = await readJson<{ packages: Record<string, unknown> }>(join(ROOT, 'package-lock.json'))
    lock.packages[''] = { name: project.name, dependencies, devDependencies }
    await writeFile(join(dir, 'package-lock.json'), JSON.stringify(lock))
    // --legacy-peer-deps as this repository installs (.npmrc): peers are listed, never fetched implicitly.
    await npm(dir, ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', '--legacy-peer-deps'])
  } catch (error) {
    await rm(dir, { recursive: true, force: true })
    throw error
  }
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) }
}

/** Runs PATH's npm (under the Node that PATH names first, as `.ci/run` arranges); on failure, its output goes into the error. */
export async function npm(cwd: string, args: string[]) {
  try {
    return await run('npm', args, { cwd, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, npm_config_update_notifier: 'false' } })
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string }
    throw new Error(`npm ${args.join(' ')} failed in ${cwd}:\n${stderr ?? ''}\n${stdout ?? ''}`.slice(0, 8000))
  }
}
