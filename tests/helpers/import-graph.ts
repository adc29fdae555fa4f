import { readdirSync, readFileSync } from 'node:fs'
import { join, relative, sep } from 'node:path'
import ts from 'typescript'

/** One import cycle: the files of a strongly connected component, and one loop through them. */
export interface ImportCycle {
  /** Every file in the component, relative to the root, sorted. */
  files: string[]
  /** One loop through it, `a.ts → b.ts → a.ts`, for the failure message. */
  loop: string[]
}

/**
 * The import cycles that touch `folders` (relative to `root`). Every import counts: static,
 * type-only (`import type`, `export type * from`) and dynamic `import()`, since each one makes the
 * two modules part of one another's definition. Imports are followed into any folder, so a cycle
 * that leaves a checked folder and comes back is found; a cycle entirely outside them is not
 * reported. Specifiers resolve as the project's tsconfig resolves them; packages are not followed.
 */
export function findImportCycles(root: string, folders: readonly string[]): ImportCycle[] {
  const options = compilerOptions(root)
  const graph = new Map<string, string[]>()
  const pending = folders.flatMap((folder) => sourceFiles(join(root, folder)))
  while (pending.length > 0) {
    const file = pending.pop()!
    if (graph.has(file)) continue
    const imported = importsOf(file, options)
    graph.set(file, imported)
    pending.push(...imported)
  }
  const checked = folders.map((folder) => join(root, folder) + sep)
  return stronglyConnected(graph)
    .filter((component) => component.length > 1 || graph.get(component[0]!)!.includes(component[0]!))
    .filter((component) => component.some((file) => checked.some((folder) => file.startsWith(folder))))
    .map((component) => ({
      files: component.map((file) => relative(root, file)).sort(),
      loop: loopThrough(component, graph).map((file) => relative(root, file)),
    }))
}

/**
 * Every import from a file under `folder` (relative to `root`) to a file of the project, each as
 * `[importer, imported]` relative to the root; static, type-only and dynamic alike.
 */
export function importsFrom(root: string, folder: string): Array<[string, string]> {
  const options = compilerOptions(root)
  return sourceFiles(join(root, folder)).flatMap((file) =>
    importsOf(file, options).map((imported): [string, string] => [relative(root, file), relative(root, imported)]),
  )
}

function importsOf(file: string, options: ts.CompilerOptions): string[] {
  const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true)
  const resolved = importedFiles.map(
    ({ fileName }) => ts.resolveModuleName(fileName, file, options, ts.sys).resolvedModule,
  )
  return [
    ...new Set(
      resolved
        .filter(
          (module) =>
            module !== undefined && !module.isExternalLibraryImport && !module.resolvedFileName.endsWith('.d.ts'),
        )
        .map((module) => module!.resolvedFileName),
    ),
  ]
}

function compilerOptions(root: string): ts.CompilerOptions {
  const path = join(root, 'tsconfig.json')
  const { config, error } = ts.readConfigFile(path, ts.sys.readFile)
  if (error)
    throw new Error(`import-graph: cannot read ${path}: ${ts.flattenDiagnosticMessageText(error.messageText, '\n')}`)
  return ts.parseJsonConfigFileContent(config, ts.sys, root).options
}

function sourceFiles(folder: string): string[] {
  return readdirSync(folder, { recursive: true, encoding: 'utf8' })
    .filter((name) => /\.(ts|tsx|mts)$/.test(name) && !name.endsWith('.d.ts'))
    .map((name) => join(folder, name))
}

/** Tarjan's algorithm, iterative over the file list; components come out as lists of files. */
function stronglyConnected(graph: Map<string, string[]>): string[][] {
  let counter = 0
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const components: string[][] = []
  const visit = (file: string) => {
    index.set(file, counter)
    low.set(file, counter)
    counter++
    stack.push(file)
    onStack.add(file)
    for (const next of graph.get(file) ?? []) {
      if (!index.has(next)) {
        visit(next)
        low.set(file, Math.min(low.get(file)!, low.get(next)!))
      } else if (onStack.has(next)) {
        low.set(file, Math.min(low.get(file)!, index.get(next)!))
      }
    }
    if (low.get(file) !== index.get(file)) return
    const component: string[] = []
    let member: string
    do {
      member = stack.pop()!
      onStack.delete(member)
      component.push(member)
    } while (member !== file)
    components.push(component)
  }
  for (const file of graph.keys()) if (!index.has(file)) visit(file)
  return components
}

/** A shortest loop from the component's first file back to itself, by breadth-first search inside the component. */
function loopThrough(component: string[], graph: Map<string, string[]>): string[] {
  const members = new Set(component)
  const start = component[0]!
  const cameFrom = new Map<string, string>()
  const queue = [start]
  while (queue.length > 0) {
    const file = queue.shift()!
    for (const next of graph.get(file) ?? []) {
      if (!members.has(next)) continue
      if (next === start) {
        const loop = [start]
        for (let at: string | undefined = file; at !== start && at !== undefined; at = cameFrom.get(at))
          loop.splice(1, 0, at)
        return [...loop, start]
      }
      if (!cameFrom.has(next)) {
        cameFrom.set(next, file)
        queue.push(next)
      }
    }
  }
  return component
}
