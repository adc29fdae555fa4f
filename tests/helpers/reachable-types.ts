import { readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import ts from 'typescript'

/**
 * The types an installed package's public signatures name that none of its entries exports, read
 * from its .d.ts files with the TypeScript checker: every declaration an entry exports is walked,
 * and so is every declaration of the package it names (a type named only through another counts).
 * Each is worded `Name (path/in/package.d.ts)`; none means a user can write every type down.
 * Types of other packages (React's, the AWS SDK's) are theirs to export.
 */
export function typesNoEntryExports(projectDir: string, packageName: string): string[] {
  const packageDir = join(projectDir, 'node_modules', packageName)
  const { exports } = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as {
    exports: Record<string, string | { types?: string }>
  }
  const entryFiles = Object.values(exports).flatMap((target) =>
    typeof target === 'object' && target.types ? [join(packageDir, target.types)] : [],
  )
  const program = ts.createProgram(entryFiles, {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    noEmit: true,
    skipLibCheck: true,
    types: [],
  })
  const checker = program.getTypeChecker()
  const resolve = (symbol: ts.Symbol) =>
    symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol
  const inPackage = (node: ts.Node) => node.getSourceFile().fileName.startsWith(`${packageDir}/`)

  const exported = new Set<ts.Symbol>()
  for (const file of entryFiles) {
    const source = program.getSourceFile(file)
    if (!source) throw new Error(`typesNoEntryExports: ${relative(projectDir, file)} is not in the program`)
    for (const symbol of checker.getExportsOfModule(checker.getSymbolAtLocation(source)!)) exported.add(resolve(symbol))
  }

  const missing = new Set<string>()
  const walked = new Set<ts.Symbol>()
  const walk = (symbol: ts.Symbol) => {
    if (walked.has(symbol)) return
    walked.add(symbol)
    for (const declaration of symbol.declarations ?? []) if (inPackage(declaration)) visit(declaration)
  }
  const named = (name: ts.EntityName | ts.Expression) => {
    const symbol = checker.getSymbolAtLocation(ts.isQualifiedName(name) ? name.right : name)
    if (!symbol) return
    const target = resolve(symbol)
    const declaration = target.declarations?.[0]
    // Type parameters, and values named by `typeof` that are not module-level (a parameter), are no one's to export.
    if (!declaration || !inPackage(declaration) || target.flags & ts.SymbolFlags.TypeParameter) return
    if (!ts.isSourceFile(declaration.parent) && !ts.isVariableDeclarationList(declaration.parent)) return
    if (!exported.has(target))
      missing.add(`${target.name} (${relative(packageDir, declaration.getSourceFile().fileName)})`)
    walk(target)
  }
  const visit = (node: ts.Node): void => {
    if (ts.isTypeReferenceNode(node)) named(node.typeName)
    else if (ts.isExpressionWithTypeArguments(node)) named(node.expression)
    else if (ts.isTypeQueryNode(node)) named(node.exprName)
    else if (ts.isImportTypeNode(node) && node.qualifier) named(node.qualifier)
    ts.forEachChild(node, visit)
  }
  for (const symbol of exported) walk(symbol)
  return [...missing].sort()
}
