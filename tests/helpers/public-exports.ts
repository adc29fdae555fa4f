import { existsSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import ts from 'typescript'
import { ROOT } from '../../scripts/build.ts'

export interface EntryExports {
  /** What a user imports: `updraft-s3`, `updraft-s3/server`, … */
  specifier: string
  /** The source file the entry is built from, relative to the repository root. */
  source: string
  /** Exported names that are values (functions, classes, constants). */
  values: string[]
  /** Exported names that are types only. */
  types: string[]
}

type ExportTarget = string | { types?: string; default?: string }

/** The entries' sources, from package.json `exports`. */
function entrySources(): Array<{ specifier: string; source: string }> {
  const { exports } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    exports: Record<string, ExportTarget>
  }
  return (
    Object.entries(exports)
      // package.json and the components' stylesheet export no names.
      .filter(([subpath]) => subpath !== './package.json' && !subpath.endsWith('.css'))
      .map(([subpath, target]) => {
        const built = typeof target === 'string' ? target : target.default!
        const base = built.replace(/^\.\/dist\/lib\//, '').replace(/\.js$/, '')
        const source = [`${base}.ts`, `${base}.tsx`].find((path) => existsSync(join(ROOT, path)))
        if (!source) throw new Error(`package.json exports ${subpath}: no source for ${built}`)
        return { specifier: `updraft-s3${subpath.slice(1)}`, source }
      })
  )
}

let entryProgram:
  | { entries: Array<{ specifier: string; source: string }>; program: ts.Program; checker: ts.TypeChecker }
  | undefined

/**
 * One program over every entry, built once per test worker: reading the sources and the typings
 * they reach (the AWS SDK's among them) is most of what these checks cost, and the unit lane
 * shares modules between files (isolate: false), so public-api, entry-surface and react-entries
 * read them once.
 */
function entriesProgram() {
  if (!entryProgram) {
    const entries = entrySources()
    const config = ts.getParsedCommandLineOfConfigFile(
      join(ROOT, 'tsconfig.json'),
      {},
      { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} },
    )!
    const program = ts.createProgram(
      entries.map(({ source }) => join(ROOT, source)),
      config.options,
    )
    entryProgram = { entries, program, checker: program.getTypeChecker() }
  }
  return entryProgram
}

/** Each entry's exported symbols, aliases resolved to what they name. */
function entrySymbols(): Array<{
  specifier: string
  source: string
  symbols: Array<{ symbol: ts.Symbol; target: ts.Symbol }>
}> {
  const { entries, program, checker } = entriesProgram()
  return entries.map(({ specifier, source }) => {
    const file = program.getSourceFile(join(ROOT, source))!
    const symbols = checker.getExportsOfModule(checker.getSymbolAtLocation(file)!).map((symbol) => ({
      symbol,
      target: symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol,
    }))
    return { specifier, source, symbols }
  })
}

/**
 * Every public export, per package.json `exports` entry, read from the sources with the
 * TypeScript checker: what the built `.d.ts` files must offer a user under `strict`.
 */
export function publicExports(): EntryExports[] {
  return entrySymbols().map(({ specifier, source, symbols }) => {
    const values: string[] = []
    const types: string[] = []
    for (const { symbol, target } of symbols) (target.flags & ts.SymbolFlags.Value ? values : types).push(symbol.name)
    return { specifier, source, values: values.sort(), types: types.sort() }
  })
}

/**
 * A module that names every export of every entry, each under `{entry}__{name}` so entries that
 * share a name (the error classes) do not clash: a missing name, or a type where a value was
 * expected, fails type-checking.
 */
export function everyExportModule(entries: EntryExports[]): string {
  const alias = (specifier: string, name: string) => `${specifier.replace(/\W/g, '_')}__${name}`
  return entries
    .map(({ specifier, values, types }) => {
      const names = [
        ...values.map((name) => `${name} as ${alias(specifier, name)}`),
        ...types.map((name) => `type ${name} as ${alias(specifier, name)}`),
      ]
      return `export { ${names.join(', ')} } from '${specifier}'`
    })
    .join('\n')
}

export interface ExportDocs {
  specifier: string
  name: string
  /** Where it is declared, `path:line`. */
  at: string
  /** The TSDoc summary and body, without tags. */
  text: string
  /** Block tags present: `throws`, `example`, `default`, … */
  tags: string[]
}

/** The doc comment of every public export, once per declaration (the error classes appear in several entries). */
export function publicExportDocs(): ExportDocs[] {
  const { checker } = entriesProgram()
  const seen = new Set<ts.Symbol>()
  const docs: ExportDocs[] = []
  for (const { specifier, symbols } of entrySymbols()) {
    for (const { symbol, target } of symbols) {
      if (seen.has(target)) continue
      seen.add(target)
      const declaration = target.declarations![0]!
      const declared = declaration.getSourceFile()
      docs.push({
        specifier,
        name: symbol.name,
        at: `${relative(ROOT, declared.fileName)}:${declared.getLineAndCharacterOfPosition(declaration.getStart()).line + 1}`,
        text: ts.displayPartsToString(target.getDocumentationComment(checker)),
        tags: target.getJsDocTags(checker).map((tag) => tag.name),
      })
    }
  }
  return docs
}
