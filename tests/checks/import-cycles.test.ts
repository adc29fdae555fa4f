import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { ROOT } from '../../scripts/build.ts'
import { findImportCycles, importsFrom } from '../helpers/import-graph.ts'

/**
 * Folders whose import graph must have no cycle, type-only imports included: a cycle means a
 * declaration lives in the wrong module (issue 22 found six, each one).
 */
const ACYCLIC_FOLDERS = ['engine', 'src', 'server', 'protocol', 'cli']

describe('import graph', () => {
  it(`has no cycle through ${ACYCLIC_FOLDERS.join('/, ')}/`, () => {
    const cycles = findImportCycles(ROOT, ACYCLIC_FOLDERS).map(({ files, loop }) =>
      files.length > loop.length - 1 ? `${loop.join(' → ')}, one loop among ${files.join(', ')}` : loop.join(' → '),
    )
    expect(cycles, 'each cycle is a declaration in the wrong module: move it where its concept lives').toEqual([])
  })
})

/**
 * engine/'s folders are layers, bottom first: a folder imports only its own and those below it
 * (type-only imports too), so one upload reads top-down and nothing calls back up. The entries
 * (`upload()`, `uploadObject()`, …) sit at engine/'s root, above every folder.
 */
const ENGINE_LAYERS = [
  ['core'], // errors, options, the run and its hooks, bodies, progress, the pause signal
  ['transport'], // transports, one exchange with its stall watchdog, retries, the connection budget, the upload API's client
  ['s3'], // signing (aws4fetch), storage requests and their errors, the part loop, one object's steps
  // What an upload may add: resume after a reload, checksums, SSE-C, tags, AWS's endpoint rules.
  // Below the modes: `upload()`'s options (modes/request.ts) name `ResumeUploads` and the opt-ins' types.
  ['resume', 'opt-ins'],
  ['modes'], // asking the upload API, token and presigned mode, /complete
]

describe('engine layers', () => {
  it(`no folder of engine/ imports one above it (${ENGINE_LAYERS.map((layer) => layer.join(' + ')).join(' ← ')} ← the entries)`, () => {
    const layerOf = (path: string) => {
      const folder = /^engine\/([^/]+)\//.exec(path)?.[1]
      if (folder === undefined) return path.startsWith('engine/') ? ENGINE_LAYERS.length : -1
      const layer = ENGINE_LAYERS.findIndex((folders) => folders.includes(folder))
      if (layer === -1) throw new Error(`engine/${folder}/ is in no layer of ENGINE_LAYERS: add it where it belongs`)
      return layer
    }
    const upward = importsFrom(ROOT, 'engine')
      .filter(([importer, imported]) => layerOf(imported) > layerOf(importer))
      .map(([importer, imported]) => `${importer} → ${imported}`)
    expect(upward, 'each import runs up a layer: move the declaration down to where its users are').toEqual([])
  })
})

/**
 * The stores, browsers and proxies that tests, benchmarks and the demo all start live in dev/;
 * tests/ holds tests and what only they use. A benchmark or the demo reaching into tests/ would
 * tie them to the suite's fixtures again (issue 36), and dev/ is below all three.
 */
const ABOVE_TESTS = ['bench', 'demo', 'dev']

describe('shared dev infrastructure', () => {
  it(`${ABOVE_TESTS.map((folder) => `${folder}/`).join(', ')} import nothing from tests/`, () => {
    const intoTests = ABOVE_TESTS.flatMap((folder) => importsFrom(ROOT, folder))
      .filter(([, imported]) => imported.startsWith('tests/'))
      .map(([importer, imported]) => `${importer} → ${imported}`)
    expect(intoTests, 'move what both sides use into dev/').toEqual([])
  })
})

describe('findImportCycles', () => {
  const root = mkdtempSync(join(tmpdir(), 'import-cycles-'))
  afterAll(() => rmSync(root, { recursive: true, force: true }))
  const write = (path: string, text: string) => {
    mkdirSync(join(root, path, '..'), { recursive: true })
    writeFileSync(join(root, path), text)
  }
  writeFileSync(
    join(root, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        moduleResolution: 'Bundler',
        module: 'ESNext',
        allowImportingTsExtensions: true,
        noEmit: true,
      },
    }),
  )
  write('a/one.ts', "import type { Two } from './two.ts'\nexport type One = Two")
  write('a/two.ts', "import { three } from '../b/three.ts'\nexport type Two = typeof three")
  write('b/three.ts', "export type { One } from '../a/one.ts'\nexport const three = 3")
  write('b/alone.ts', "import { three } from './three.ts'\nexport const alone = three")
  write('c/four.ts', "export const four = () => import('./five.ts')")
  write('c/five.ts', "import { four } from './four.ts'\nexport const five = four")

  it('finds a cycle made of type-only imports and re-exports, across folders', () => {
    expect(findImportCycles(root, ['a'])).toEqual([
      {
        files: ['a/one.ts', 'a/two.ts', 'b/three.ts'],
        loop: expect.arrayContaining(['a/one.ts', 'a/two.ts', 'b/three.ts']),
      },
    ])
  })

  it('counts dynamic imports, and reports only cycles that touch the folders asked for', () => {
    expect(findImportCycles(root, ['c']).map(({ files }) => files)).toEqual([['c/five.ts', 'c/four.ts']])
    expect(findImportCycles(root, ['c', 'a'])).toHaveLength(2)
    // b/alone.ts imports into a cycle but is not part of it.
    expect(findImportCycles(root, ['b']).flatMap(({ files }) => files)).not.toContain('b/alone.ts')
  })
})
