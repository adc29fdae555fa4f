// The package as a user gets it: `npm pack`, then an install into a fresh project, offline.
//
// Offline, because a test must not depend on what the registry serves today: every package the
// projects need is a dependency of this repository too, so `npm ci` has put its tarball in the
// npm cache. A fresh project cannot simply `npm install --offline`: resolving versions needs the
// registry's package documents, which `npm ci` does not cache. So the project gets a lockfile
// cut from this repository's (the versions and integrity hashes `npm ci` installed, only those
// the project reaches), plus an entry for the tarball, and `npm ci --offline` installs exactly it.
import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { copyFile, cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { ensurePackageBuilt, LIB_DIR, ROOT } from '../../scripts/build.ts'
import { buildWhenStale } from '../../scripts/fresh-build.ts'

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
  const tarball = join(PACK_DIR, `updraft-s3-${version}.tgz`)
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
 * Copies `template` (an example app) to a fresh temporary folder and installs it with `npm ci
 * --offline`, `updraft-s3` taken from the packed tarball. `extraDependencies` are added as
 * devDependencies at this repository's versions (e.g. the TypeScript a check needs);
 * `leftOut` are dropped from the project's devDependencies (a tool the test replaces, such as
 * wrangler, which miniflare stands in for, and which is not in this repository's npm cache).
 */
export async function installProject(
  template: string,
  extraDependencies: string[] = [],
  leftOut: string[] = [],
): Promise<InstalledProject> {
  const tarball = await packTarball()
  const dir = await mkdtemp(join(tmpdir(), 'updraft-consumer-'))
  try {
    await cp(template, dir, { recursive: true, filter: (path) => !/[\\/](node_modules|dist|\.next)$/.test(path) })
    await copyFile(tarball, join(dir, 'updraft.tgz'))
    const repo = await readJson<PackageJson>(join(ROOT, 'package.json'))
    const pinned = { ...repo.dependencies, ...repo.devDependencies }
    const project = await readJson<PackageJson>(join(dir, 'package.json'))
    const dependencies = { ...project.dependencies, 'updraft-s3': 'file:updraft.tgz' }
    const devDependencies = Object.fromEntries(
      Object.entries(project.devDependencies ?? {}).filter(([name]) => !leftOut.includes(name)),
    )
    for (const name of extraDependencies) {
      if (!pinned[name])
        throw new Error(`installProject: ${name} is not a dependency of this repository, so it is not in the npm cache`)
      devDependencies[name] = pinned[name]
    }
    await writeFile(
      join(dir, 'package.json'),
      JSON.stringify({ ...project, private: true, dependencies, devDependencies }, null, 2),
    )
    const lock = await projectLock(project.name ?? 'consumer', dependencies, devDependencies, join(dir, 'updraft.tgz'))
    await writeFile(join(dir, 'package-lock.json'), JSON.stringify(lock, null, 2))
    // --legacy-peer-deps as this repository installs (.npmrc): peers are listed, never fetched implicitly.
    await npm(dir, ['ci', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', '--legacy-peer-deps']).catch(
      (error: Error) => {
        if (!error.message.includes('ENOTCACHED')) throw error
        throw new Error(
          `${error.message}\nA package of package-lock.json is missing from the npm cache: run \`npm ci\` in the repository once, which caches every one.`,
        )
      },
    )
  } catch (error) {
    await rm(dir, { recursive: true, force: true })
    throw error
  }
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) }
}

interface LockEntry {
  version?: string
  dependencies?: Record<string, string>
  optionalDependencies?: Record<string, string>
  [field: string]: unknown
}

/**
 * A lockfile for a project with these dependencies: the entries of this repository's lockfile
 * that the project reaches, resolved as Node does (nearest node_modules first), and the tarball.
 */
async function projectLock(
  name: string,
  dependencies: Record<string, string>,
  devDependencies: Record<string, string>,
  tarball: string,
) {
  const repoLock = await readJson<{ packages: Record<string, LockEntry> }>(join(ROOT, 'package-lock.json'))
  const updraft = await readJson<PackageJson & Record<string, unknown>>(join(ROOT, 'package.json'))
  const bytes = await readFile(tarball)
  const packages: Record<string, LockEntry> = {
    '': { name, dependencies, devDependencies },
    'node_modules/updraft-s3': {
      version: updraft.version,
      resolved: 'file:updraft.tgz',
      integrity: `sha512-${createHash('sha512').update(bytes).digest('base64')}`,
      dependencies: updraft.dependencies,
      peerDependencies: updraft.peerDependencies,
      peerDependenciesMeta: updraft.peerDependenciesMeta,
      bin: updraft.bin,
      engines: updraft.engines,
    },
  }
  const lookup = (from: string, dependency: string): string | undefined => {
    for (let at = from; ; at = at.replace(/\/?node_modules\/(@[^/]+\/)?[^/]+$/, '')) {
      const key = `${at ? `${at}/` : ''}node_modules/${dependency}`
      if (repoLock.packages[key] || packages[key]) return key
      if (!at) return undefined
    }
  }
  // [where the dependent sits, the dependency's name]
  const queue: Array<[string, string]> = [
    ...Object.keys({ ...dependencies, ...devDependencies })
      .filter((dependency) => dependency !== 'updraft-s3')
      .map((dependency): [string, string] => ['', dependency]),
    ...Object.keys(updraft.dependencies ?? {}).map((dependency): [string, string] => [
      'node_modules/updraft-s3',
      dependency,
    ]),
  ]
  while (queue.length > 0) {
    const [from, dependency] = queue.shift()!
    const key = lookup(from, dependency)
    if (!key || packages[key]) continue // optional dependencies of other platforms are not in the lock
    const { dev: _dev, devOptional: _devOptional, ...entry } = repoLock.packages[key]!
    packages[key] = entry
    for (const next of Object.keys({ ...entry.dependencies, ...entry.optionalDependencies })) queue.push([key, next])
  }
  return { name, lockfileVersion: 3, requires: true, packages }
}

/**
 * The environment a user's shell gives npm: without the npm_config_* variables that `npm test`
 * exports from this repository's .npmrc (legacy-peer-deps among them, which changes what installs).
 */
export function userNpmEnv(): NodeJS.ProcessEnv {
  const kept = Object.entries(process.env).filter(
    ([name]) => !/^npm_config_/i.test(name) || /^npm_config_(cache|registry|userconfig)$/i.test(name),
  )
  // Nothing printed that a test reading npx's output would have to skip.
  return Object.fromEntries([...kept, ['npm_config_update_notifier', 'false']]) as NodeJS.ProcessEnv
}

/** Runs PATH's npm (under the Node that PATH names first, as `.ci/run` arranges); on failure, its output goes into the error. */
export async function npm(cwd: string, args: string[], env: NodeJS.ProcessEnv = process.env) {
  try {
    return await run('npm', args, {
      cwd,
      maxBuffer: 64 * 1024 * 1024,
      env: { ...env, npm_config_update_notifier: 'false' },
    })
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string }
    throw new Error(`npm ${args.join(' ')} failed in ${cwd}:\n${stderr ?? ''}\n${stdout ?? ''}`.slice(0, 8000))
  }
}
