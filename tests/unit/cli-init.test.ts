// `npx updraft-s3 init <framework>` (cli/init.ts): the example's files into the folder, package.json
// given the example's "type" and scripts, nothing overwritten without --force, and the install
// line for what package.json lacks.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { EXAMPLES_DIR, runInit, templateFiles } from '../../cli/init.ts'
import { main } from '../../cli/updraft.ts'

let dir: string
let printed: string[]
const print = (line: string) => printed.push(line)
const readJson = async (path: string) => JSON.parse(await readFile(join(dir, path), 'utf8'))

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'updraft-init-'))
  printed = []
})
afterEach(() => rm(dir, { recursive: true, force: true }))

describe('updraft-s3 init', () => {
  it("writes the example's source files (no build output or local secrets) and a package.json with its type and scripts, and lists every package to install", async () => {
    expect(await runInit('hono', dir, false, print)).toBe(0)
    const files = await templateFiles(join(EXAMPLES_DIR, 'hono'))
    expect(files).toEqual(['package.json', 'public/index.html', 'server.js', 'src/page.js'])
    for (const path of files.filter((path) => path !== 'package.json')) {
      expect(await readFile(join(dir, path), 'utf8')).toBe(await readFile(join(EXAMPLES_DIR, 'hono', path), 'utf8'))
    }
    const example = JSON.parse(await readFile(join(EXAMPLES_DIR, 'hono', 'package.json'), 'utf8'))
    expect(await readJson('package.json')).toEqual({ private: true, type: 'module', scripts: example.scripts })
    expect(printed).toContain(`  npm install ${Object.keys(example.dependencies).join(' ')}`)
    expect(printed).toContain(`  npm install -D ${Object.keys(example.devDependencies).join(' ')}`)
  })

  it('keeps what package.json has, adds the scripts, and asks to install only what it lacks', async () => {
    await writeFile(
      join(dir, 'package.json'),
      JSON.stringify({
        name: 'mine',
        scripts: { test: 'vitest' },
        dependencies: { hono: '^4.0.0', 'updraft-s3': '^0.1.0' },
      }),
    )
    expect(await runInit('hono', dir, false, print)).toBe(0)
    const manifest = await readJson('package.json')
    expect(manifest).toMatchObject({
      name: 'mine',
      type: 'module',
      dependencies: { hono: '^4.0.0', 'updraft-s3': '^0.1.0' },
    })
    expect(Object.keys(manifest.scripts)).toEqual(['test', 'build', 'start'])
    const install = printed.find((line) => line.startsWith('  npm install ') && !line.includes(' -D '))!
    expect(install).toContain('@hono/node-server')
    expect(install).not.toMatch(/ hono( |$)| updraft-s3/)
  })

  it('writes nothing when a file or script would be overwritten, naming each; --force overwrites them', async () => {
    await writeFile(join(dir, 'server.js'), '// mine\n')
    await writeFile(
      join(dir, 'package.json'),
      JSON.stringify({ type: 'commonjs', scripts: { start: 'node index.js' } }),
    )
    expect(await runInit('hono', dir, false, print)).toBe(1)
    expect(printed.join('\n')).toMatch(
      /nothing was written[\s\S]*server\.js[\s\S]*"type" \(commonjs[\s\S]*script "start" \(node index\.js[\s\S]*--force/,
    )
    expect(await readFile(join(dir, 'server.js'), 'utf8')).toBe('// mine\n')
    await expect(readFile(join(dir, 'src', 'page.js'))).rejects.toThrow()

    expect(await runInit('hono', dir, true, print)).toBe(0)
    expect(await readFile(join(dir, 'server.js'), 'utf8')).toBe(
      await readFile(join(EXAMPLES_DIR, 'hono', 'server.js'), 'utf8'),
    )
    expect(await readJson('package.json')).toMatchObject({ type: 'module', scripts: { start: 'node server.js' } })
  })

  it('run twice, keeps every file (already the same) and succeeds', async () => {
    expect(await runInit('worker', dir, false, print)).toBe(0)
    printed = []
    expect(await runInit('worker', dir, false, print)).toBe(0)
    expect(printed.filter((line) => line.startsWith('  wrote'))).toEqual([])
    expect(printed).toContain('  kept  wrangler.jsonc (already the same)')
  })

  it('names the frameworks it takes when given another', async () => {
    expect(await main(['init', 'express'], print)).toBe(2)
    expect(printed).toEqual(['init takes one of next, fastify, hono, worker, as in: npx updraft-s3 init hono'])
  })
})
