// Issue 9, "a consumer test": the package as a user gets it. `npm pack`, installed offline into a
// fresh copy of examples/fastify (a Vite + React page and a Fastify server), then: the page is
// built with Vite and uploads through updraft-s3/fastify to s3rver in Chromium; a file using every
// public export type-checks under `strict`, the typings refuse what fails at run time, and every
// type a public signature names can be imported; updraft-s3/server loads in plain Node ESM; and
// the browser entries, bundled from the installed package, are the bytes `npm run size` measures.
import { execFile } from 'node:child_process'
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { measureBundle, UPDRAFT_ENTRIES } from '../bench/lib/bundle.ts'
import { type AppProcess, appEnv, startApp } from '../dev/app-process.ts'
import { type ChromiumSession, launchChromium } from '../dev/launch-chromium.ts'
import { type S3rverInstance, startS3rver } from '../dev/s3rver.ts'
import { storeEnv } from '../dev/stores.ts'
import { ROOT } from '../scripts/build.ts'
import { uploadThroughPage } from './helpers/example-page.ts'
import { type InstalledProject, installProject, tarballFiles } from './helpers/installed-package.ts'
import { everyExportModule, publicExports } from './helpers/public-exports.ts'
import { typesNoEntryExports } from './helpers/reachable-types.ts'

const run = promisify(execFile)
const node = (cwd: string, args: string[]) =>
  run(process.execPath, args, { cwd, env: appEnv(), maxBuffer: 16 * 1024 * 1024 })

let project: InstalledProject
let s3: S3rverInstance

beforeAll(async () => {
  s3 = await startS3rver()
  project = await installProject(join(ROOT, 'examples', 'fastify'), [
    'typescript',
    '@types/node',
    '@types/react',
    '@types/react-dom',
  ])
}, 300_000)

afterAll(async () => {
  await project?.remove()
  await s3?.stop()
})

/** Entries for Node only: a page's project never imports them. */
const SERVER_ENTRIES = [
  'updraft-s3/server',
  'updraft-s3/fastify',
  'updraft-s3/esbuild-plugin',
  'updraft-s3/node-transport',
]

describe('the tarball', () => {
  it('holds the built files, package.json, README and LICENSE, and every exports target', async () => {
    const files = await tarballFiles()
    const outside = files.filter(
      (path) => !path.startsWith('dist/lib/') && !['package.json', 'README.md', 'LICENSE'].includes(path),
    )
    expect(outside).toEqual([])
    expect(files).toContain('LICENSE')
    // TypeScript sources only among the quick starts `npx updraft-s3 init` writes (examples/, copied as they are).
    expect(
      files.filter((path) => path.endsWith('.ts') && !path.endsWith('.d.ts') && !path.startsWith('dist/lib/examples/')),
    ).toEqual([])
    expect(files).toEqual(
      expect.arrayContaining([
        'dist/lib/examples/hono/server.js',
        'dist/lib/examples/nextjs/app/page.tsx',
        'dist/lib/examples/worker/wrangler.jsonc',
      ]),
    )
    const manifest = JSON.parse(await readFile(join(project.dir, 'node_modules', 'updraft-s3', 'package.json'), 'utf8'))
    const targets = Object.values(manifest.exports as Record<string, string | Record<string, string>>).flatMap(
      (target) => (typeof target === 'string' ? [target] : Object.values(target)),
    )
    for (const target of targets) expect(files, target).toContain(target.replace(/^\.\//, ''))
    expect(manifest.dependencies).not.toHaveProperty('fastify')
    expect(manifest.peerDependenciesMeta).toMatchObject({ fastify: { optional: true }, react: { optional: true } })
  })
})

describe('installed into a fresh project', () => {
  it('loads updraft-s3/server and every Node entry from plain Node ESM, and the handler answers', async () => {
    const script = `
      import { createUploadHandler } from 'updraft-s3/server'
      import s3Upload from 'updraft-s3/fastify'
      import { nodeTransport } from 'updraft-s3/node-transport'
      import { upload, S3Error } from 'updraft-s3'
      const handle = createUploadHandler({ accessKeyId: 'k', secretAccessKey: 's', bucket: 'uploads', region: 'us-east-1' })
      const reply = await handle(new Request('http://localhost/api/s3-upload', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' }))
      console.log(JSON.stringify({ status: reply.status, body: await reply.json(),
        kinds: [typeof s3Upload, typeof nodeTransport, typeof upload, typeof S3Error] }))`
    await writeFile(join(project.dir, 'node-esm.mjs'), script)
    const { stdout } = await node(project.dir, ['node-esm.mjs'])
    const result = JSON.parse(stdout)
    expect(result.status).toBe(400)
    expect(result.body.error).toEqual(expect.any(String))
    expect(result.kinds).toEqual(['function', 'function', 'function', 'function'])
  })

  it('runs `npx updraft-s3 doctor` from the installed bin against s3rver', async () => {
    const env = appEnv(storeEnv(s3))
    const { stdout } = await run('npx', ['--offline', 'updraft-s3', 'doctor', '--origin', 'http://localhost:5173'], {
      cwd: project.dir,
      env,
    })
    expect(stdout).toMatch(/ok {4}cors +a browser preflight from http:\/\/localhost:5173 is allowed/)
    expect(stdout).toContain('No check failed.')
  })

  /** Type-checks `files` (copied into a folder of their own) under strict, the package's .d.ts files included. */
  const typeCheck = async (folder: string, files: Record<string, string>, types: string[]) => {
    await mkdir(join(project.dir, folder))
    for (const [name, text] of Object.entries(files)) await writeFile(join(project.dir, folder, name), text)
    const tsconfig = {
      compilerOptions: {
        strict: true,
        skipLibCheck: false, // the package's own .d.ts files are checked too
        module: 'nodenext',
        moduleResolution: 'nodenext',
        target: 'es2022',
        lib: ['es2023', 'dom', 'dom.iterable'],
        types,
        jsx: 'react-jsx',
        noEmit: true,
      },
      include: [folder],
    }
    await writeFile(join(project.dir, `tsconfig.${folder}.json`), JSON.stringify(tsconfig))
    const tsc = join(project.dir, 'node_modules', 'typescript', 'bin', 'tsc')
    return node(project.dir, [tsc, '-p', `tsconfig.${folder}.json`]).then(
      () => 'ok',
      (error: { stdout: string }) => error.stdout,
    )
  }

  it('type-checks, under strict, a full-stack project (Node types) using every public export and one calling them as users do', async () => {
    const entries = publicExports()
    expect(entries.map(({ specifier }) => specifier)).toEqual(
      expect.arrayContaining(['updraft-s3', 'updraft-s3/react', 'updraft-s3/server', 'updraft-s3/fastify']),
    )
    const usage = await readFile(join(ROOT, 'tests', 'consumer', 'usage.tsx'), 'utf8')
    expect(
      await typeCheck('check', { 'every-export.ts': everyExportModule(entries), 'usage.tsx': usage }, ['node']),
    ).toBe('ok')
  })

  it("type-checks, under strict, a page's project (DOM types, no Node types) using every browser entry's exports, and refuses `resume: true`", async () => {
    const browser = publicExports().filter(({ specifier }) => !SERVER_ENTRIES.includes(specifier))
    expect(browser.map(({ specifier }) => specifier)).toEqual(
      expect.arrayContaining(['updraft-s3', 'updraft-s3/presigned', 'updraft-s3/react/ui', 'updraft-s3/protocol']),
    )
    // typings.ts: `resume` takes only what resumeUploads() makes (`@ts-expect-error` lines must not
    // compile), and the types public signatures name are imported by name from their entries.
    const typings = await readFile(join(ROOT, 'tests', 'consumer', 'typings.ts'), 'utf8')
    expect(await typeCheck('page', { 'every-export.ts': everyExportModule(browser), 'typings.ts': typings }, [])).toBe(
      'ok',
    )
  })

  it('names in its public signatures only types one of its entries exports (read from the installed .d.ts files)', () => {
    expect(typesNoEntryExports(project.dir, 'updraft-s3')).toEqual([])
  })

  it('bundles the browser entries to the bytes `npm run size` measures, with no AWS SDK, Fastify or Node built-in', async () => {
    const sizes: string[] = []
    for (const [name, entry] of Object.entries(UPDRAFT_ENTRIES)) {
      const installed = await measureBundle(entry, project.dir)
      const repository = await measureBundle(entry, ROOT)
      // The same code; chunk file names (hashes of their paths) may move gzip by a byte or two.
      expect(installed.min, name).toBe(repository.min)
      expect(Math.abs(installed.gzip - repository.gzip), name).toBeLessThanOrEqual(8)
      const shipped = installed.inputs.map(({ path }) => path)
      expect(
        shipped.filter((path) => /@aws-sdk|@smithy|fastify|^node:/.test(path)),
        name,
      ).toEqual([])
      expect(
        shipped.some((path) => path.includes('node_modules/updraft-s3/dist/lib/')),
        name,
      ).toBe(true)
      // Token mode signs through aws4fetch, a lazy chunk (the design's signer, no hand-written one);
      // presigned pages, and the opt-ins alone, never ship a signer.
      const signer = installed.inputs
        .filter(({ path }) => /aws4fetch|sigv4/.test(path))
        .map(({ path, lazy }) => [path.replace(/^.*node_modules\//, ''), lazy])
      if (name === 'presigned' || name === 'checksums' || name === 'images') expect(signer, name).toEqual([])
      else
        expect(signer, name).toEqual([
          ['aws4fetch/dist/aws4fetch.esm.mjs', true],
          ['updraft-s3/dist/lib/engine/s3/aws4fetch-signer.js', true],
        ])
      sizes.push(`${name} ${installed.gzip} B gzip (${installed.allGzip} B with lazy chunks)`)
    }
    console.log(`installed entries: ${sizes.join(', ')}`)
  })
})

describe('the Vite page and the Fastify server, as installed', () => {
  let chromium: ChromiumSession
  let app: AppProcess

  beforeAll(async () => {
    await node(project.dir, [join('node_modules', 'vite', 'bin', 'vite.js'), 'build', '--logLevel', 'warn'])
    chromium = await launchChromium()
    app = await startApp([process.execPath, 'server.js'], {
      cwd: project.dir,
      env: storeEnv(s3),
    })
  }, 180_000)

  afterAll(async () => {
    await app?.stop()
    await chromium?.close()
  })

  it('the built page ships no AWS SDK', async () => {
    const assets = join(project.dir, 'dist', 'assets')
    const scripts = (await readdir(assets)).filter((name) => name.endsWith('.js'))
    expect(scripts.length).toBeGreaterThan(0)
    const codes = await Promise.all(scripts.map((name) => readFile(join(assets, name), 'utf8')))
    // The engine is in there; its body reader for bytes and streams (engine/core/stream-body) is a
    // chunk of its own, loaded only when a body that is not a Blob is uploaded.
    expect(codes.some((code) => code.includes('/api/s3-upload'))).toBe(true)
    expect(codes.some((code) => /export\{\w+ as openBody\}/.test(code) && !code.includes('/api/s3-upload'))).toBe(true)
    for (const code of codes) expect(code.match(/.{0,80}(S3Client|@aws-sdk|@smithy).{0,80}/)?.[0]).toBeUndefined()
  })

  it('uploads a small and a multipart file from Chromium; both read back byte for byte', async () => {
    await uploadThroughPage(chromium, app.origin, s3)
  })
})
