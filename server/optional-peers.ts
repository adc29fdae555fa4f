// What runs on a server needs packages a page does not: the AWS SDK, the Fastify glue, s3rver for
// the dev store. They are optional peer dependencies (package.json), so `npm install updraft-s3`
// for a page installs the engine and aws4fetch only. Server-side code loads through importNeeding(),
// which turns Node's "Cannot find package …" into the one `npm install` line that fixes it.
// Only Node reaches this module (the entries' "node" condition, the CLI): a bundler reports a
// missing package itself, at build time.
import { createRequire } from 'node:module'

/** What `updraft-s3/server`, `npx updraft-s3 doctor` and `setup-bucket` import. */
export const SERVER_PACKAGES = Object.freeze([
  '@aws-sdk/client-s3',
  '@aws-sdk/client-sts',
  '@aws-sdk/s3-presigned-post',
  '@aws-sdk/s3-request-presigner',
  '@smithy/core',
])
/** What `updraft-s3/fastify` imports (`fastify` itself is the app's own). */
export const FASTIFY_PACKAGES = Object.freeze([...SERVER_PACKAGES, '@fastify/rate-limit', 'fastify-plugin'])
/** What `npx updraft-s3 store` imports: a development tool, so a devDependency. */
export const STORE_PACKAGES = Object.freeze(['@20minutes/s3rver'])

/** An optional peer dependency that `what` needs is not installed; the message says what to run. */
export class MissingPackagesError extends Error {
  override name = 'MissingPackagesError'

  constructor(
    /** The entry or command that needs them: `updraft-s3/server`, `npx updraft-s3 store`. */
    readonly what: string,
    /** The packages Node cannot find from here. */
    readonly packages: readonly string[],
    /** The `npm install …` line that installs them at the versions package.json accepts. */
    readonly installLine: string,
    options?: ErrorOptions,
  ) {
    super(
      `updraft: ${what} needs ${listOf(packages)}, which ${packages.length === 1 ? 'is' : 'are'} not installed: run ${installLine}`,
      options,
    )
  }
}

export interface NeedOptions {
  /** Install them as devDependencies (`--save-dev`): the dev store's. @default false */
  dev?: boolean
}

/**
 * `load()`, or, when it fails because some of `packages` cannot be found from here, a
 * MissingPackagesError naming them and the install line. Any other failure is rethrown as it is;
 * nothing is checked until an import has failed, so a complete install pays nothing.
 */
export async function importNeeding<T>(
  what: string,
  packages: readonly string[],
  load: () => Promise<T>,
  { dev = false }: NeedOptions = {},
): Promise<T> {
  try {
    return await load()
  } catch (error) {
    const missing = packages.filter((name) => !resolvable(name))
    if (missing.length === 0) throw error
    throw new MissingPackagesError(what, missing, installLine(missing, peerRanges(), dev), { cause: error })
  }
}

/**
 * `npm install [--save-dev] name@major …`: the major version of the range package.json declares,
 * which npm then resolves to its newest release. Only a major, because a bare name would install
 * the newest major, which the peer range may refuse, and because `^` is an escape character in
 * Windows' cmd.exe and a glob character in zsh's extended globbing.
 */
export function installLine(
  packages: readonly string[],
  ranges: Readonly<Record<string, string>>,
  dev = false,
): string {
  const specs = packages.map((name) => {
    const major = /^(?:\^|~|>=)?(\d+)(?:\.|$)/.exec(ranges[name] ?? '')?.[1]
    return major ? `${name}@${major}` : name
  })
  return ['npm install', ...(dev ? ['--save-dev'] : []), ...specs].join(' ')
}

function resolvable(name: string): boolean {
  try {
    import.meta.resolve(name)
    return true
  } catch {
    return false
  }
}

/** package.json's peer ranges, read through the package's own name (the file sits at a different depth in dist/lib than in the sources). */
function peerRanges(): Record<string, string> {
  try {
    return (
      (createRequire(import.meta.url)('updraft-s3/package.json') as { peerDependencies?: Record<string, string> })
        .peerDependencies ?? {}
    )
  } catch {
    return {}
  }
}

const listOf = (names: readonly string[]) =>
  names.length === 1 ? names[0]! : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`
