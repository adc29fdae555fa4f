import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'
import { corsRule } from '../../cli/bucket-rules.ts'
import { serverKeyPolicy } from '../../server/key-policy.ts'
import { ROOT } from '../../scripts/build.ts'

// Every code block in README.md and docs/*.md that is TypeScript, TSX, JavaScript or JSON is held
// to the code (CONTRIBUTING.md, "Snippets in the docs"). The comment line just above a fence says how:
//   <!-- quote: examples/x/y.ts -->            the block is that file's whole text
//   <!-- quote: examples/x/y.ts (excerpt) -->  the block's lines appear, in a row, in that file
//   <!-- check: declare const file: File -->   type-check under strict, after these declarations
//   <!-- check as lib/uploads.ts: … -->         the same, as a file of that name (another block imports it)
//   <!-- json: cors -->                          JSON equal to what the CLI applies (see `generated`)
// A ts/tsx block with no marker is type-checked as it is; a js block needs a quote; other JSON must parse.

export interface Snippet {
  doc: string
  line: number
  lang: string
  code: string
  marker: string | undefined
}

const DOCS = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)]

export function snippets(doc: string, text = readFileSync(join(ROOT, doc), 'utf8')): Snippet[] {
  const lines = text.split('\n')
  const found: Snippet[] = []
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)```(\w+)\s*$/.exec(lines[i]!)
    if (!open) {
      if (/^\s*```/.test(lines[i]!)) i = closing(lines, i) // a fence with no language: skip its body
      continue
    }
    const indent = open[1]!
    const end = closing(lines, i)
    const code = lines.slice(i + 1, end).map((line) => line.slice(indent.length)).join('\n')
    const above = lines.slice(0, i).reverse().find((line) => line.trim() !== '')
    const marker = above && /^\s*<!--([\s\S]*)-->\s*$/.exec(above)?.[1]?.trim()
    found.push({ doc, line: i + 1, lang: open[2]!, code, marker: marker || undefined })
    i = end
  }
  return found
}

function closing(lines: string[], open: number): number {
  for (let j = open + 1; j < lines.length; j++) if (/^\s*```\s*$/.test(lines[j]!)) return j
  throw new Error(`unclosed fence at line ${open + 1}`)
}

const TYPED = new Set(['ts', 'tsx'])
const all = DOCS.flatMap((doc) => snippets(doc))
const where = (s: Snippet) => `${s.doc}:${s.line}`

/** The JSON the docs show that the CLI also applies or prints: one source each. */
const generated: Record<string, () => unknown> = {
  cors: () => ({ CORSRules: [corsRule(['https://app.example.com'])] }),
  'server-key-policy presigned': () => serverKeyPolicy({ bucket: 'uploads', mode: 'presigned', keyPrefix: 'next-s3-uploads/' }),
}

describe('doc snippets', () => {
  it('finds the snippets (README and docs/)', () => {
    expect(all.filter((s) => TYPED.has(s.lang)).length).toBeGreaterThan(10)
  })

  it('quotes files under examples/ exactly', () => {
    const quoted = all.filter((s) => s.marker?.startsWith('quote:'))
    expect(quoted.length).toBeGreaterThan(3)
    for (const s of quoted) {
      const [, path, excerpt] = /^quote:\s*(\S+)(\s+\(excerpt\))?$/.exec(s.marker!) ?? []
      expect(path, `${where(s)}: quote marker '${s.marker}'`).toMatch(/^examples\//)
      const file = readFileSync(join(ROOT, path!), 'utf8').replace(/\n$/, '')
      if (excerpt) expect(containsLines(file, s.code), `${where(s)}: not an excerpt of ${path}`).toBe(true)
      else expect(s.code, `${where(s)}: differs from ${path}`).toBe(file)
    }
  })

  it('gives every JavaScript block a quote (it cannot be type-checked)', () => {
    for (const s of all.filter((s) => s.lang === 'js' || s.lang === 'jsx')) {
      expect(s.marker, `${where(s)}: a js block with no quote marker`).toMatch(/^quote:/)
    }
  })

  it('shows JSON that parses, and the CLI\'s own rules where it names one', () => {
    for (const s of all.filter((s) => s.lang === 'json')) {
      const value: unknown = JSON.parse(s.code)
      const name = s.marker?.match(/^json:\s*(.+)$/)?.[1]
      if (name === undefined) continue
      expect(generated[name], `${where(s)}: no generator for '${name}'`).toBeDefined()
      expect(value, where(s)).toEqual(generated[name]!())
    }
  })

  it('links only to files and headings that exist', () => {
    const broken: string[] = []
    for (const doc of [...DOCS, 'CONTRIBUTING.md', 'examples/README.md']) {
      const text = readFileSync(join(ROOT, doc), 'utf8').replace(/```[\s\S]*?```/g, '')
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target!)) continue
        const [path, anchor] = target!.split('#')
        const file = path ? join(ROOT, dirname(doc), path) : join(ROOT, doc)
        if (!existsSync(file)) broken.push(`${doc}: ${target} (no such file)`)
        else if (anchor && file.endsWith('.md') && !anchors(readFileSync(file, 'utf8')).has(anchor)) broken.push(`${doc}: ${target} (no such heading)`)
      }
    }
    expect(broken).toEqual([])
  })

  it('type-checks every other TypeScript block under strict against the package sources', () => {
    const checked = all.filter((s) => TYPED.has(s.lang) && !s.marker?.startsWith('quote:'))
    expect(checked.length).toBeGreaterThan(10)
    const errors = typeCheck(checked)
    expect(errors).toEqual([])
    // A whole compile of the docs against the sources and their typings (~10 s of CPU): at a load
    // of 27 on two cores it took 109 s and ran out of the lane's 60 s. A limit, not a bound under test.
  }, 240_000)
})

/** GitHub's heading anchors (lower case, punctuation dropped, spaces to dashes) and explicit `<a id>`s. */
function anchors(markdown: string): Set<string> {
  const ids = new Set<string>()
  const text = markdown.replace(/```[\s\S]*?```/g, '')
  for (const [, heading] of text.matchAll(/^#+\s+(.+)$/gm)) {
    ids.add(heading!.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-'))
  }
  for (const [, id] of text.matchAll(/<a id="([^"]+)">/g)) ids.add(id!)
  return ids
}

/** True when `excerpt`'s lines appear in `file` as consecutive lines. */
function containsLines(file: string, excerpt: string): boolean {
  const lines = file.split('\n')
  const want = excerpt.split('\n')
  return lines.some((_, start) => want.every((line, k) => lines[start + k] === line))
}

/** `updraft-s3` and `updraft-s3/*` mapped to their sources, from package.json `exports`. */
function packagePaths(): Record<string, string[]> {
  const { exports } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { exports: Record<string, string | { default: string }> }
  const paths: Record<string, string[]> = {}
  for (const [subpath, target] of Object.entries(exports)) {
    if (subpath === './package.json') continue
    const built = typeof target === 'string' ? target : target.default
    const source = built.replace(/^\.\/dist\/lib\//, '')
    const specifier = `updraft-s3${subpath.slice(1)}`
    paths[specifier] = source.endsWith('.css') ? [join(ROOT, source)] : [join(ROOT, source.replace(/\.js$/, '.ts')), join(ROOT, source.replace(/\.js$/, '.tsx'))]
  }
  return paths
}

/**
 * Type-checks the snippets as modules of one program, each in a virtual file under
 * `<root>/.doc-snippets/` (so `react`, `fastify` and the rest resolve from node_modules), with the
 * repository's compiler options, `strict`, Vite's client types (a CSS import) and `updraft-s3/*`
 * mapped to the sources. Returns one line per diagnostic, naming the doc and line.
 */
export function typeCheck(list: Snippet[]): string[] {
  const dir = join(ROOT, '.doc-snippets')
  const files = new Map<string, Snippet>()
  const texts = new Map<string, string>()
  list.forEach((s, index) => {
    const named = /^check as (\S+?):?(?:\s|$)/.exec(s.marker ?? '')?.[1]
    const prelude = s.marker?.match(/^check(?: as \S+?)?:([\s\S]*)$/)?.[1]?.trim() ?? ''
    const name = named ?? `${index}-${s.doc.replace(/\W/g, '_')}-${s.line}.${s.lang}`
    const path = join(dir, name)
    if (files.has(path)) throw new Error(`${where(s)}: a second snippet named ${name}`)
    files.set(path, s)
    // The prelude shares the first line, so diagnostics keep the snippet's own line numbers.
    texts.set(path, `${prelude ? `${prelude};` : ''}${s.code}\nexport {}\n`)
  })

  const config = ts.getParsedCommandLineOfConfigFile(join(ROOT, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} })!
  const options: ts.CompilerOptions = {
    ...config.options,
    strict: true,
    noEmit: true,
    types: ['node', 'vite/client'],
    paths: packagePaths(),
    baseUrl: undefined,
  }
  const host = ts.createCompilerHost(options)
  const readFile = host.readFile.bind(host)
  const fileExists = host.fileExists.bind(host)
  const getSourceFile = host.getSourceFile.bind(host)
  host.readFile = (path) => texts.get(path) ?? readFile(path)
  host.fileExists = (path) => texts.has(path) || fileExists(path)
  const directoryExists = host.directoryExists?.bind(host)
  host.directoryExists = (path) => [...texts.keys()].some((file) => file.startsWith(`${path}/`)) || (directoryExists?.(path) ?? true)
  host.getSourceFile = (path, language, onError, create) => {
    const text = texts.get(path)
    return text === undefined ? getSourceFile(path, language, onError, create) : ts.createSourceFile(path, text, language, true)
  }
  const program = ts.createProgram([...texts.keys()], options, host)
  // The snippets' own diagnostics only: checking every source file they reach as well (what
  // getPreEmitDiagnostics does) cost a third of this test's time for diagnostics it then dropped.
  return [...files.keys()]
    .map((path) => program.getSourceFile(path)!)
    .flatMap((file) => [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)])
    .filter((d) => d.file && files.has(d.file.fileName))
    .map((d) => {
      const s = files.get(d.file!.fileName)!
      const { line } = d.file!.getLineAndCharacterOfPosition(d.start ?? 0)
      return `${s.doc}:${s.line + 1 + line}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`
    })
}
