// The server's packages are optional peers (server/optional-peers.ts): a page's install holds only
// package.json's `dependencies`, so these hold the lists, the guards and package.json together.
// tests/package-install.test.ts installs the packed package and watches the guards fire.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { build, type Metafile } from 'esbuild'
import { describe, expect, it } from 'vitest'
import { ROOT } from '../../scripts/build.ts'
import {
  FASTIFY_PACKAGES,
  installLine,
  MissingPackagesError,
  SERVER_PACKAGES,
  STORE_PACKAGES,
} from '../../server/optional-peers.ts'

interface Manifest {
  dependencies: Record<string, string>
  devDependencies: Record<string, string>
  peerDependencies: Record<string, string>
  peerDependenciesMeta: Record<string, { optional?: boolean }>
  exports: Record<string, string | Record<string, string>>
}
const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Manifest

/** The graph esbuild sees from `entry`, packages left out. */
async function graph(entry: string): Promise<Metafile> {
  const { metafile } = await build({
    entryPoints: [join(ROOT, entry)],
    bundle: true,
    write: false,
    metafile: true,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    logLevel: 'silent',
  })
  return metafile
}

/** The packages (not node: built-ins) `entry` imports at run time: through static imports only, or through dynamic ones too. */
async function packagesReached(entry: string, { dynamic }: { dynamic: boolean }): Promise<string[]> {
  const { inputs } = await graph(entry)
  const packages = new Set<string>()
  const seen = new Set<string>()
  const pending = [Object.keys(inputs).find((path) => path.endsWith(entry))!]
  while (pending.length > 0) {
    const file = pending.pop()!
    if (seen.has(file)) continue
    seen.add(file)
    for (const { path, kind, external } of inputs[file]!.imports) {
      if (kind === 'dynamic-import' && !dynamic) continue
      if (!external) pending.push(path)
      else if (!path.startsWith('node:'))
        packages.add(
          path
            .split('/')
            .slice(0, path.startsWith('@') ? 2 : 1)
            .join('/'),
        )
    }
  }
  return [...packages].sort()
}

const sorted = (names: readonly string[]) => [...names].sort()

describe('package.json', () => {
  it("depends on aws4fetch alone: a page's install is the engine and its signer", () => {
    expect(Object.keys(manifest.dependencies)).toEqual(['aws4fetch'])
  })

  it('declares every package a server entry or command needs as an optional peer, and installs it for this repository', () => {
    for (const name of new Set([...FASTIFY_PACKAGES, ...STORE_PACKAGES, 'fastify'])) {
      expect(manifest.peerDependenciesMeta[name], name).toEqual({ optional: true })
      expect(manifest.peerDependencies[name], name).toMatch(/^(\^\d+\.\d+\.\d+|\d+\.x)$/)
      expect(manifest.devDependencies[name], name).toBeDefined()
    }
  })

  it('sends Node to the guarded entries for updraft-s3/server and updraft-s3/fastify, bundlers for Workers to the plain ones', () => {
    expect(manifest.exports['./server']).toEqual({
      types: './dist/lib/server/index.d.ts',
      node: './dist/lib/server/index.node.js',
      default: './dist/lib/server/index.js',
    })
    expect(manifest.exports['./fastify']).toEqual({
      types: './dist/lib/server/fastify.d.ts',
      node: './dist/lib/server/fastify.node.js',
      default: './dist/lib/server/fastify.js',
    })
  })
})

describe('what each server entry and command imports', () => {
  it.each([
    ['server/index.ts', SERVER_PACKAGES],
    ['server/fastify.ts', FASTIFY_PACKAGES],
    ['cli/bucket-tools.ts', [...SERVER_PACKAGES, 'aws4fetch']],
    ['cli/embedded-s3.ts', STORE_PACKAGES],
  ])('%s imports exactly the packages its list names', async (entry, packages) => {
    expect(await packagesReached(entry, { dynamic: true })).toEqual(sorted(packages))
  })

  it.each(['server/index.node.ts', 'server/fastify.node.ts', 'cli/bin.ts'])(
    '%s reaches no optional peer before its check: only through a dynamic import',
    async (entry) => {
      expect(await packagesReached(entry, { dynamic: false })).toEqual([])
    },
  )

  it.each([
    ['../../server/index.node.ts', '../../server/index.ts'],
    ['../../server/fastify.node.ts', '../../server/fastify.ts'],
  ])('%s exports what %s exports, the same values', async (guarded, plain) => {
    const [checked, module] = await Promise.all([import(guarded), import(plain)])
    expect(sorted(Object.keys(checked))).toEqual(sorted(Object.keys(module)))
    for (const name of Object.keys(module)) expect(checked[name], name).toBe(module[name])
  })
})

describe('installLine', () => {
  const ranges = { a: '^3.1169.0', '@scope/b': '5.x', c: '>=18', d: '~2.1.0' }

  it("pins each package to the major of package.json's range, which every shell takes as it is", () => {
    expect(installLine(['a', '@scope/b', 'd'], ranges)).toBe('npm install a@3 @scope/b@5 d@2')
    expect(installLine(['c'], ranges, true)).toBe('npm install --save-dev c@18')
  })

  it('names a package without a range as it is', () => {
    expect(installLine(['e'], ranges)).toBe('npm install e')
  })

  it('makes, from package.json, the lines the README and the errors give', () => {
    expect(installLine(SERVER_PACKAGES, manifest.peerDependencies)).toBe(
      'npm install @aws-sdk/client-s3@3 @aws-sdk/client-sts@3 @aws-sdk/s3-presigned-post@3 @aws-sdk/s3-request-presigner@3 @smithy/core@3',
    )
    expect(installLine(STORE_PACKAGES, manifest.peerDependencies, true)).toBe(
      'npm install --save-dev @20minutes/s3rver@4',
    )
  })
})

it('MissingPackagesError says what needs what, and the line to run, in one sentence', () => {
  const error = new MissingPackagesError(
    'updraft-s3/fastify',
    ['@fastify/rate-limit', 'fastify-plugin'],
    'npm install @fastify/rate-limit@11 fastify-plugin@5',
  )
  expect(error.message).toBe(
    'updraft: updraft-s3/fastify needs @fastify/rate-limit and fastify-plugin, which are not installed: run npm install @fastify/rate-limit@11 fastify-plugin@5',
  )
  expect(new MissingPackagesError('x', ['a'], 'npm install a').message).toBe(
    'updraft: x needs a, which is not installed: run npm install a',
  )
})
