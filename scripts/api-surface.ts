// The package's public surface across its entries, for scripts/api-report.ts. API Extractor looks
// at one entry at a time, so it calls a type "forgotten" when its entry does not export it even
// when another entry does (`uploadWithToken` from `updraft-s3/token` takes `UploadOptions`, which
// `updraft-s3` exports: every name is exported by one entry only). This tells the two apart, by
// the declaration a signature names rather than by its name.

import { createRequire } from 'node:module'
import { isAbsolute, join } from 'node:path'
import type { ExtractorMessage } from '@microsoft/api-extractor'
import type ts from 'typescript'
import { ROOT } from './build.ts'

// API Extractor's own TypeScript, whose program this reads (its syntax kinds may differ from ours).
const extractor = createRequire(import.meta.url).resolve('@microsoft/api-extractor')
const typescript = createRequire(extractor)('typescript') as typeof ts

export interface PackageSurface {
  /** Names exported by more than one entry, worded. */
  duplicates: string[]
  /** Whether the type an `ae-forgotten-export` message (reported for `entryFile`) names is exported by another entry. */
  exportedElsewhere(message: ExtractorMessage, entryFile: string): boolean
}

export function packageSurface(program: unknown, entries: Array<{ subpath: string; file: string }>): PackageSurface {
  const checker = (program as ts.Program).getTypeChecker()
  const resolve = (symbol: ts.Symbol) =>
    symbol.flags & typescript.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol
  /** Every exported declaration, with the entry files that export it. */
  const owners = new Map<ts.Symbol, string[]>()
  const entriesOf = new Map<string, string[]>()
  for (const { subpath, file } of entries) {
    const source = (program as ts.Program).getSourceFile(file)
    if (!source) throw new Error(`api-surface: ${file} is not in the program`)
    for (const exported of checker.getExportsOfModule(checker.getSymbolAtLocation(source)!)) {
      const target = resolve(exported)
      owners.set(target, [...(owners.get(target) ?? []), file])
      entriesOf.set(exported.name, [...(entriesOf.get(exported.name) ?? []), subpath])
    }
  }
  const duplicates = [...entriesOf]
    .filter(([, subpaths]) => subpaths.length > 1)
    .map(([name, subpaths]) => `"${name}" is exported by ${subpaths.join(' and ')}: export each name from one entry`)

  return {
    duplicates,
    exportedElsewhere(message, entryFile) {
      const name = /The symbol "(.+?)"/.exec(message.text)?.[1]
      const path =
        message.sourceFilePath &&
        (isAbsolute(message.sourceFilePath) ? message.sourceFilePath : join(ROOT, message.sourceFilePath))
      const source = path && (program as ts.Program).getSourceFile(path)
      if (!name || !source || !message.sourceFileLine || !message.sourceFileColumn) return false
      // The message points at the declaration whose signature names the type: look up that name there.
      const at = source.getPositionOfLineAndCharacter(message.sourceFileLine - 1, message.sourceFileColumn - 1)
      const statement = source.statements.find((node) => node.pos <= at && at < node.end)
      let elsewhere = false
      const visit = (node: ts.Node): void => {
        if (typescript.isIdentifier(node) && node.text === name) {
          const symbol = checker.getSymbolAtLocation(node)
          if (symbol && owners.get(resolve(symbol))?.some((file) => file !== entryFile)) elsewhere = true
        }
        typescript.forEachChild(node, visit)
      }
      if (statement) visit(statement)
      return elsewhere
    },
  }
}
