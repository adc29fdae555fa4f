// engine/core/option-names.ts: in development builds an entry names, once, an option it does not know,
// and a renamed one with its new name; production bundles carry none of it. The lists of known
// names are checked here against the entries' option types, so neither can grow alone.
import { join } from 'node:path'
import { build } from 'esbuild'
import ts from 'typescript'
import { afterEach, beforeEach, describe, expect, it, type MockInstance, vi } from 'vitest'
import { type OptionTaker, optionNames } from '../../engine/core/option-names.ts'
import { upload, uploadObject } from '../../engine/index.ts'
import { uploadPresigned } from '../../engine/presigned.ts'
import { uploadWithToken } from '../../engine/token.ts'
import type { Transport } from '../../engine/transport/transport.ts'
import { ROOT } from '../../scripts/build.ts'

/** Every request fails at once, without retries: these tests look at the warning only. */
const offline: Transport = () => Promise.reject(new TypeError('offline'))
const settle = (promise: Promise<unknown>) => promise.catch(() => {})
const quiet = { transport: offline, retry: { limit: 0 } }
const target = {
  bucket: 'b',
  key: 'k',
  region: 'us-east-1',
  credentials: { accessKeyId: 'a', secretAccessKey: 's' },
  ...quiet,
}

let warn: MockInstance<typeof console.warn>
beforeEach(() => {
  warn = vi.spyOn(console, 'warn').mockImplementation(() => {})
})
afterEach(() => {
  warn.mockRestore()
  vi.unstubAllEnvs()
})
const warnings = () => warn.mock.calls.map(([message]) => message)

// Names are warned about once per page (module), so each test uses names of its own.
describe('an option an entry does not know', () => {
  it('is named once, with its new name when it was renamed', async () => {
    await settle(upload(new Blob(['x']), { ...quiet, queueSize: 2, retryDelay: 100 } as never))
    await settle(upload(new Blob(['x']), { ...quiet, queueSize: 2 } as never))
    expect(warnings()).toEqual([
      "updraft: upload() has no option 'queueSize'; it is now 'partConcurrency'",
      "updraft: upload() has no option 'retryDelay'; it is now 'retry.delay'",
    ])
  })

  it("names upload()'s old `endpoint` (now `api`), while uploadObject() takes `endpoint` (storage's URL)", async () => {
    await settle(uploadObject(new Blob(['x']), { ...target, endpoint: 'http://127.0.0.1:9' }))
    expect(warnings()).toEqual([])
    await settle(upload(new Blob(['x']), { ...quiet, endpoint: '/api/upload' } as never))
    expect(warnings()).toEqual(["updraft: upload() has no option 'endpoint'; it is now 'api'"])
  })

  it('is named by every entry, inside `retry` too; a new name the entry does not take is not offered', async () => {
    await settle(uploadWithToken(new Blob(['x']), { ...quiet, strategy: 'presigned' } as never))
    await settle(
      uploadPresigned(new Blob(['x']), { ...quiet, objectHeaders: {}, retry: { limit: 0, maxRetries: 3 } } as never),
    )
    await settle(uploadObject(new Blob(['x']), { ...target, endpointHeaders: {}, locate: () => undefined } as never))
    expect(warnings()).toEqual([
      "updraft: uploadWithToken() has no option 'strategy'; it is ignored",
      "updraft: uploadPresigned() has no option 'objectHeaders'; it is ignored",
      "updraft: uploadPresigned() has no option 'retry.maxRetries'; it is ignored",
      "updraft: uploadObject() has no option 'endpointHeaders'; it is ignored",
      "updraft: uploadObject() has no option 'locate'; it is now 'resolveEndpoint'",
    ])
  })

  it('is not named for known options', async () => {
    const every = {
      ...quiet,
      api: '/api/s3-upload',
      apiBody: {},
      apiHeaders: {},
      partConcurrency: 2,
      partSize: 5 * 1024 * 1024,
      stallTimeout: 1000,
    }
    await settle(
      upload(new Blob(['x']), {
        ...every,
        strategy: 'token',
        retry: { limit: 0, delay: 1, shouldRetry: () => undefined },
      }),
    )
    await settle(
      uploadObject(new Blob(['x']), {
        ...target,
        endpoint: 'http://127.0.0.1:9',
        forcePathStyle: true,
        cacheControl: 'no-cache',
      }),
    )
    expect(warnings()).toEqual([])
  })

  it('is not named in production', async () => {
    vi.stubEnv('NODE_ENV', 'production')
    await settle(upload(new Blob(['x']), { ...quiet, maxAttempts: 3 } as never))
    expect(warnings()).toEqual([])
  })

  it('breaks nothing where `process` is undefined (a page without a bundler)', async () => {
    const { process } = globalThis
    let result: Promise<unknown>
    try {
      ;(globalThis as { process?: unknown }).process = undefined
      result = upload(new Blob(['x']), { ...quiet, retries: 3 } as never)
    } finally {
      globalThis.process = process
    }
    await expect(result).rejects.toThrow() // the offline transport's failure, not a ReferenceError
    await expect(result).rejects.not.toBeInstanceOf(ReferenceError)
    expect(warnings()).toEqual([])
  })
})

describe('a production bundle', () => {
  // As a page's bundler builds it: `process.env.NODE_ENV` replaced, then dead code dropped.
  const bundle = async (mode: string) => {
    const result = await build({
      stdin: { contents: "export { upload, uploadObject } from './engine/index.ts'", loader: 'ts', resolveDir: ROOT },
      bundle: true,
      format: 'esm',
      platform: 'browser',
      minify: true,
      write: false,
      logLevel: 'silent',
      define: { 'process.env.NODE_ENV': JSON.stringify(mode) },
    })
    return result.outputFiles[0]!.text
  }

  it('carries no warning, no list of names and no `process`', async () => {
    const production = await bundle('production')
    expect(production).not.toMatch(/has no option|queueSize|process/)
    expect(await bundle('development')).toContain('has no option')
  })
})

describe('the lists of known names', () => {
  // Read from the sources with the TypeScript checker: each entry's option parameter, by name
  // (no Node types: names are all this reads, and parsing them would take seconds).
  const program = ts.createProgram(
    ['engine/index.ts', 'engine/token.ts', 'engine/presigned.ts'].map((file) => join(ROOT, file)),
    {
      strict: true,
      allowImportingTsExtensions: true,
      noEmit: true,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      module: ts.ModuleKind.ESNext,
      target: ts.ScriptTarget.ES2022,
      types: [],
    },
  )
  const checker = program.getTypeChecker()
  const optionsOf = (file: string, name: OptionTaker) => {
    const module = checker.getSymbolAtLocation(program.getSourceFile(join(ROOT, file))!)!
    const exported = checker.getExportsOfModule(module).find((symbol) => symbol.name === name)!
    const fn = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported
    const [signature] = checker.getSignaturesOfType(checker.getTypeOfSymbol(fn), ts.SignatureKind.Call)
    const options = checker.getTypeOfSymbol(signature!.getParameters()[1]!)
    const names = checker.getPropertiesOfType(checker.getNonNullableType(options)).map((property) => property.name)
    const retry = checker.getPropertiesOfType(
      checker.getNonNullableType(checker.getTypeOfSymbol(options.getProperty('retry')!)),
    )
    return [...names, ...retry.map((property) => `retry.${property.name}`)].sort()
  }

  it.each([
    ['engine/index.ts', 'upload'],
    ['engine/token.ts', 'uploadWithToken'],
    ['engine/presigned.ts', 'uploadPresigned'],
    ['engine/index.ts', 'uploadObject'],
  ] as const)("are %s's %s option names, no more and no less", (file, name) => {
    expect([...optionNames(name)].sort()).toEqual(optionsOf(file, name))
  })
})
