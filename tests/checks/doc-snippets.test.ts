import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'
import { corsRule } from '../../cli/bucket-rules.ts'
import { EXAMPLES_DIR, QUICK_STARTS, type QuickStart, templateFiles } from '../../cli/init.ts'
import { ROOT } from '../../scripts/build.ts'
import { serverKeyPolicy } from '../../server/key-policy.ts'
import { quickStartCommands, type Snippet, snippets } from '../helpers/doc-snippets.ts'

// Every code block in README.md and docs/*.md that is TypeScript, TSX, JavaScript or JSON is held
// to the code (CONTRIBUTING.md, "Snippets in the docs"). The comment line just above a fence says how:
//   <!-- quote: examples/x/y.ts -->            the block is that file's whole text
//   <!-- quote: examples/x/y.ts (excerpt) -->  the block's lines appear, in a row, in that file
//   <!-- check: declare const file: File -->   type-check under strict, after these declarations
//   <!-- check as lib/uploads.ts: … -->         the same, as a file of that name (another block imports it)
//   <!-- json: cors -->                          JSON equal to what the CLI applies (see `generated`)
//   <!-- quickstart: hono -->                    (sh) a quick start's commands, which tests/quickstarts-tarball.test.ts runs
// A ts/tsx block with no marker is type-checked as it is; a js block needs a quote; other JSON must parse.

const DOCS = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
]

const TYPED = new Set(['ts', 'tsx'])
const all = DOCS.flatMap((doc) => snippets(doc))
const where = (s: Snippet) => `${s.doc}:${s.line}`

/** The JSON the docs show that the CLI also applies or prints: one source each. */
const generated: Record<string, () => unknown> = {
  cors: () => ({ CORSRules: [corsRule(['https://app.example.com'])] }),
  'server-key-policy presigned': () =>
    serverKeyPolicy({ bucket: 'uploads', mode: 'presigned', keyPrefix: 'next-s3-uploads/' }),
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

  it("shows JSON that parses, and the CLI's own rules where it names one", () => {
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
        else if (anchor && file.endsWith('.md') && !anchors(readFileSync(file, 'utf8')).has(anchor))
          broken.push(`${doc}: ${target} (no such heading)`)
      }
    }
    expect(broken).toEqual([])
  })

  it("names, in each quick start's npm install lines, every package its example's package.json lists, and runs `init` with its name", () => {
    const quickStarts = quickStartCommands()
    expect([...quickStarts.keys()].sort()).toEqual(Object.keys(QUICK_STARTS).sort())
    for (const [name, commands] of quickStarts) {
      const { folder } = QUICK_STARTS[name as QuickStart]
      const manifest = JSON.parse(readFileSync(join(EXAMPLES_DIR, folder, 'package.json'), 'utf8')) as Record<
        'dependencies' | 'devDependencies',
        Record<string, string>
      >
      const installs = commands.filter(([tool, verb]) => tool === 'npm' && verb === 'install')
      const named = (dev: boolean) =>
        installs
          .filter((words) => words.includes('-D') === dev)
          .flatMap((words) =>
            words
              .slice(2)
              .filter((word) => !word.startsWith('-'))
              .map((word) => word.replace(/(?<=.)@[^/]*$/, '')),
          ) // `name@3` names `name`
      expect(named(false).sort(), `README quick start ${name}: npm install`).toEqual(
        Object.keys(manifest.dependencies).sort(),
      )
      expect(named(true).sort(), `README quick start ${name}: npm install -D`).toEqual(
        Object.keys(manifest.devDependencies ?? {}).sort(),
      )
      expect(
        commands.map((words) => words.join(' ')),
        name,
      ).toContain(`npx updraft-s3 init ${name}`)
    }
  })

  // One TypeScript program over every snippet and example (~10 s of CPU): at a load of 27 on two
  // cores it took 109 s. A limit, not a bound under test.
  it("type-checks every other TypeScript block under strict against the package sources, and the examples' JavaScript (checkJs)", {
    timeout: 240_000,
  }, async () => {
    const checked = all.filter((s) => TYPED.has(s.lang) && !s.marker?.startsWith('quote:'))
    expect(checked.length).toBeGreaterThan(10)
    const scripts: string[] = []
    for (const { folder } of Object.values(QUICK_STARTS)) {
      for (const path of await templateFiles(join(EXAMPLES_DIR, folder)))
        if (path.endsWith('.js')) scripts.push(join(EXAMPLES_DIR, folder, path))
    }
    expect(scripts.map((path) => path.slice(EXAMPLES_DIR.length))).toEqual(
      expect.arrayContaining(['fastify/server.js', 'hono/src/page.js', 'worker/build.js']),
    )
    const errors = typeCheck(checked, scripts)
    expect(errors).toEqual([])
  })
})

/** GitHub's heading anchors (lower case, punctuation dropped, spaces to dashes) and explicit `<a id>`s. */
function anchors(markdown: string): Set<string> {
  const ids = new Set<string>()
  const text = markdown.replace(/```[\s\S]*?```/g, '')
  for (const [, heading] of text.matchAll(/^#+\s+(.+)$/gm)) {
    ids.add(
      heading!
        .trim()
        .toLowerCase()
        .replace(/[^\p{L}\p{N}\s_-]/gu, '')
        .replace(/\s/g, '-'),
    )
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
  const { exports } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    exports: Record<string, string | { default: string }>
  }
  const paths: Record<string, string[]> = {}
  for (const [subpath, target] of Object.entries(exports)) {
    if (subpath === './package.json') continue
    const built = typeof target === 'string' ? target : target.default
    const source = built.replace(/^\.\/dist\/lib\//, '')
    const specifier = `updraft-s3${subpath.slice(1)}`
    paths[specifier] = source.endsWith('.css')
      ? [join(ROOT, source)]
      : [join(ROOT, source.replace(/\.js$/, '.ts')), join(ROOT, source.replace(/\.js$/, '.tsx'))]
  }
  return paths
}

/**
 * Type-checks the snippets as modules of one program, each in a virtual file under
 * `<root>/.doc-snippets/` (so `react`, `fastify` and the rest resolve from node_modules), with the
 * repository's compiler options, `strict`, Vite's client types (a CSS import) and `updraft-s3/*`
 * mapped to the sources. Returns one line per diagnostic, naming the doc and line.
 */
function typeCheck(list: Snippet[], scripts: string[] = []): string[] {
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

  const config = ts.getParsedCommandLineOfConfigFile(
    join(ROOT, 'tsconfig.json'),
    {},
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} },
  )!
  const options: ts.CompilerOptions = {
    ...config.options,
    strict: true,
    noEmit: true,
    types: ['node', 'vite/client'],
    // `scripts` (the examples' .js files) are checked as an editor with checkJs on checks them.
    allowJs: true,
    checkJs: true,
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
  host.directoryExists = (path) =>
    [...texts.keys()].some((file) => file.startsWith(`${path}/`)) || (directoryExists?.(path) ?? true)
  host.getSourceFile = (path, language, onError, create) => {
    const text = texts.get(path)
    return text === undefined
      ? getSourceFile(path, language, onError, create)
      : ts.createSourceFile(path, text, language, true)
  }
  const program = ts.createProgram([...texts.keys(), ...scripts], options, host)
  // The snippets' and scripts' own diagnostics only: checking every source file they reach as well
  // (what getPreEmitDiagnostics does) cost a third of this test's time for diagnostics it then dropped.
  const diagnosticsOf = (path: string) => {
    const file = program.getSourceFile(path)!
    return [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)]
  }
  const inScripts = scripts
    .flatMap(diagnosticsOf)
    .map(
      (d) =>
        `${d.file!.fileName.slice(ROOT.length)}:${d.file!.getLineAndCharacterOfPosition(d.start ?? 0).line + 1}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`,
    )
  return [...files.keys()]
    .flatMap(diagnosticsOf)
    .filter((d) => d.file && files.has(d.file.fileName))
    .map((d) => {
      const s = files.get(d.file!.fileName)!
      const { line } = d.file!.getLineAndCharacterOfPosition(d.start ?? 0)
      return `${s.doc}:${s.line + 1 + line}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`
    })
    .concat(inScripts)
}
