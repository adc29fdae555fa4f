// What `npm install updraft-s3` brings, installed as a user installs it: the packed tarball, npm's
// own defaults (no --legacy-peer-deps: npm 7+ installs a package's non-optional peers, never its
// optional ones), fresh empty folders. A page's install holds the engine and aws4fetch and nothing
// of the server; a server entry or command without the server's packages stops with the npm install
// line that adds them; the README's server lines install what the entries import; and
// `npx updraft-s3 store` runs the dev store from the package, which an upload through the package's
// own Fastify plugin and engine reaches, read back byte for byte.
//
// Unlike installed-package.ts's offline installs, this one resolves versions as npm does for a
// user, from the registry (`--prefer-offline`: the cache first): what a user gets is the question.
import { execFile } from 'node:child_process'
import { copyFile, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readObject, sdkClient, sha256, testBytes } from '../dev/s3-client.ts'
import { ROOT } from '../scripts/build.ts'
import { FASTIFY_PACKAGES, installLine, SERVER_PACKAGES, STORE_PACKAGES } from '../server/optional-peers.ts'
import { npm, packTarball, userNpmEnv } from './helpers/installed-package.ts'
import { type GroupProcess, groupAlive, killGroup, spawnGroup } from './helpers/process-group.ts'

const run = promisify(execFile)
const MB = 1_000_000
const INSTALL = ['--no-audit', '--no-fund', '--prefer-offline']

const manifest = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as {
  peerDependencies: Record<string, string>
}
/** What the entries say when their packages are missing (server/optional-peers.ts). */
const SERVER_LINE = installLine(SERVER_PACKAGES, manifest.peerDependencies)
const FASTIFY_LINE = installLine(FASTIFY_PACKAGES, manifest.peerDependencies)
const STORE_LINE = installLine(STORE_PACKAGES, manifest.peerDependencies, true)

const folders: string[] = []
let tarball: string

/** A fresh empty project folder holding the packed tarball, as `npm init` leaves one. */
async function emptyProject(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'updraft-install-'))
  folders.push(dir)
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true }, null, 2))
  await copyFile(tarball, join(dir, 'updraft-s3.tgz'))
  return dir
}

/** `npm install …` as a README line says it, `updraft-s3` taken from the tarball. */
const npmInstall = (dir: string, line: string) => {
  const [command, verb, ...args] = line.split(' ')
  if (command !== 'npm' || verb !== 'install') throw new Error(`not an npm install line: ${line}`)
  return npm(
    dir,
    ['install', ...INSTALL, ...args.map((arg) => (arg === 'updraft-s3' ? './updraft-s3.tgz' : arg))],
    userNpmEnv(),
  )
}

/** The packages under node_modules (npm's hidden lockfile lists each one it placed) and the bytes of their files. */
async function measure(dir: string): Promise<{ packages: string[]; bytes: number }> {
  const lock = JSON.parse(await readFile(join(dir, 'node_modules', '.package-lock.json'), 'utf8')) as {
    packages: Record<string, unknown>
  }
  const packages = Object.keys(lock.packages)
    .map((path) => path.replace(/^.*node_modules\//, ''))
    .sort()
  let bytes = 0
  for (const entry of await readdir(join(dir, 'node_modules'), { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) bytes += (await stat(join(entry.parentPath, entry.name))).size
  }
  return { packages, bytes }
}

const describeInstall = ({ packages, bytes }: { packages: string[]; bytes: number }) =>
  `${packages.length} packages, ${(bytes / MB).toFixed(2)} MB`

/** Runs `code` as an ES module with plain Node in `dir`, as a user's server would; resolves with its exit code and output. */
async function node(dir: string, code: string, env: NodeJS.ProcessEnv = userNpmEnv()) {
  const file = join(dir, `script-${folders.length}-${Math.random().toString(36).slice(2)}.mjs`)
  await writeFile(file, code)
  return run(process.execPath, [file], { cwd: dir, env }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => ({
      code: error.code,
      stdout: error.stdout,
      stderr: error.stderr,
    }),
  )
}

const npx = (dir: string, args: string[]) =>
  run('npx', ['--offline', 'updraft-s3', ...args], { cwd: dir, env: userNpmEnv() }).then(
    ({ stdout }) => ({ code: 0, output: stdout }),
    (error: { code: number; stdout: string; stderr: string }) => ({
      code: error.code,
      output: error.stdout + error.stderr,
    }),
  )

/** The README's Install section's `npm install updraft-s3 …` lines. */
async function readmeInstallLines(): Promise<string[]> {
  const readme = await readFile(join(ROOT, 'README.md'), 'utf8')
  const section = readme.slice(
    readme.indexOf('## Install\n'),
    readme.indexOf('\n## ', readme.indexOf('## Install\n') + 1),
  )
  return [...section.matchAll(/^npm install updraft-s3.*$/gm)].map(([line]) => line)
}

beforeAll(async () => {
  tarball = await packTarball()
}, 300_000)

afterAll(async () => {
  for (const dir of folders) await rm(dir, { recursive: true, force: true })
})

describe('a page-only install: npm install updraft-s3', () => {
  let page: string

  beforeAll(async () => {
    page = await emptyProject()
    await npmInstall(page, 'npm install updraft-s3')
  }, 300_000)

  it('holds updraft-s3 and aws4fetch only: at most 5 packages and 3 MB of node_modules', async () => {
    const installed = await measure(page)
    console.log(`page-only install: ${describeInstall(installed)} (${installed.packages.join(', ')})`)
    expect(installed.packages).toEqual(['aws4fetch', 'updraft-s3'])
    expect(installed.packages.length).toBeLessThanOrEqual(5)
    expect(installed.bytes).toBeLessThanOrEqual(3 * MB)
  })

  it('imports the page entries', async () => {
    const { code, stdout, stderr } = await node(
      page,
      `import { upload } from 'updraft-s3'
       import { uploadPresigned } from 'updraft-s3/presigned'
       import { uploadWithToken } from 'updraft-s3/token'
       console.log([upload, uploadPresigned, uploadWithToken].map((f) => typeof f).join())`,
    )
    expect(stderr).toBe('')
    expect({ code, stdout: stdout.trim() }).toEqual({ code: 0, stdout: 'function,function,function' })
  })

  it.each([
    ['updraft-s3/server', SERVER_LINE],
    ['updraft-s3/fastify', FASTIFY_LINE],
  ])('importing %s stops with the npm install line that adds what it needs', async (entry, line) => {
    const { code, stderr } = await node(page, `import ${JSON.stringify(entry)}`)
    expect(code).toBe(1)
    expect(stderr).toContain(`MissingPackagesError: updraft: ${entry} needs `)
    expect(stderr).toContain(`which are not installed: run ${line}\n`)
  })

  it('`npx updraft-s3 doctor` and `npx updraft-s3 store` print the npm install line and exit 1; --help needs nothing more', async () => {
    const doctor = await npx(page, ['doctor'])
    expect(doctor).toEqual({
      code: 1,
      output: `updraft: npx updraft-s3 doctor needs ${SERVER_PACKAGES.slice(0, -1).join(', ')} and ${SERVER_PACKAGES.at(-1)}, which are not installed: run ${SERVER_LINE}\n`,
    })
    const store = await npx(page, ['store'])
    expect(store).toEqual({
      code: 1,
      output: `updraft: npx updraft-s3 store needs @20minutes/s3rver, which is not installed: run ${STORE_LINE}\n`,
    })
    const help = await npx(page, ['--help'])
    expect(help.code).toBe(0)
    expect(help.output).toContain('npx updraft-s3 store')
  })
})

describe("a server install, with the README's lines", () => {
  let server: string

  beforeAll(async () => {
    server = await emptyProject()
  })

  it("the README's lines are the entries' own install lines, plus updraft-s3 (and fastify for the plugin)", async () => {
    expect(await readmeInstallLines()).toEqual([
      'npm install updraft-s3',
      SERVER_LINE.replace('npm install', 'npm install updraft-s3'),
      FASTIFY_LINE.replace('npm install', 'npm install updraft-s3 fastify@5'),
    ])
  })

  // Each step installs on top of the one before, in the same folder, as a user adding to an app.
  describe('the server line', () => {
    beforeAll(async () => {
      const [, serverLine] = await readmeInstallLines()
      await npmInstall(server, serverLine!)
      console.log(`server install (${serverLine}): ${describeInstall(await measure(server))}`)
    }, 300_000)

    it('installs what updraft-s3/server imports: the handler answers; the plugin names the two packages it still lacks', async () => {
      const handler = await node(
        server,
        `import { createUploadHandler } from 'updraft-s3/server'
         const handle = createUploadHandler({ accessKeyId: 'k', secretAccessKey: 's', bucket: 'uploads', region: 'us-east-1' })
         const reply = await handle(new Request('http://localhost/api/s3-upload', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' }))
         console.log(reply.status)`,
      )
      expect(handler).toEqual({ code: 0, stdout: '400\n', stderr: '' })
      const plugin = await node(server, `import 'updraft-s3/fastify'`)
      expect(plugin.stderr).toContain(
        `updraft: updraft-s3/fastify needs @fastify/rate-limit and fastify-plugin, which are not installed: run npm install @fastify/rate-limit@11 fastify-plugin@5\n`,
      )
    })

    describe('then the Fastify line', () => {
      beforeAll(async () => {
        const [, , fastifyLine] = await readmeInstallLines()
        await npmInstall(server, fastifyLine!)
        console.log(`server install with Fastify (${fastifyLine}): ${describeInstall(await measure(server))}`)
      }, 300_000)

      it('installs what updraft-s3/fastify imports', async () => {
        const plugin = await node(server, `import s3Upload from 'updraft-s3/fastify'\nconsole.log(typeof s3Upload)`)
        expect(plugin).toEqual({ code: 0, stdout: 'function\n', stderr: '' })
      })

      describe('npx updraft-s3 store, with s3rver installed by the line it printed', () => {
        let store: GroupProcess

        beforeAll(async () => {
          await npmInstall(server, STORE_LINE)
        }, 300_000)

        afterAll(() => {
          if (store) killGroup(store.child)
        })

        it('prints settings that an upload through the Fastify plugin and the engine uses: both files read back byte for byte; Ctrl-C stops it', async () => {
          store = spawnGroup(
            'npx',
            ['--offline', 'updraft-s3', 'store'],
            { ...userNpmEnv(), UPDRAFT_S3_PORT: '0' },
            server,
          )
          await expect.poll(store.output, { timeout: 90_000, interval: 200 }).toContain('Press Ctrl-C to stop.')
          expect(store.output()).toContain(`objects in ${join(server, '.data', 's3')}`)
          // The bash line, through a real bash, as a user pastes it.
          const line = /bash, zsh: +(export .*)$/m.exec(store.output())?.[1]
          expect(line, store.output()).toBeDefined()
          const printed = (await run('bash', ['-c', `${line}\nenv`])).stdout
          const settings = Object.fromEntries(
            [...printed.matchAll(/^(S3_UPLOAD_[A-Z_]+)=(.*)$/gm)].map(([, name, value]) => [name!, value!]),
          )
          expect(Object.keys(settings)).toHaveLength(7)
          expect(store.output()).toMatch(/^Then start your app in that shell/m)

          const small = testBytes(64 * 1024, 41)
          const large = testBytes(11 * 1024 * 1024, 42) // three parts of 5 MiB at most: a multipart upload
          await writeFile(join(server, 'small.bin'), small)
          await writeFile(join(server, 'large.bin'), large)
          // A user's server (the plugin, from the environment the bash line set) and a Node client (the engine).
          const uploaded = await node(
            server,
            `import { readFile } from 'node:fs/promises'
             import Fastify from 'fastify'
             import s3Upload from 'updraft-s3/fastify'
             import { upload } from 'updraft-s3'
             const app = Fastify()
             await app.register(s3Upload)
             const origin = await app.listen({ port: 0, host: '127.0.0.1' })
             const keys = []
             for (const name of ['small.bin', 'large.bin']) {
               const file = new File([await readFile(name)], name, { type: 'application/octet-stream' })
               keys.push((await upload(file, { api: origin + '/api/s3-upload', partSize: 5 * 1024 * 1024 })).key)
             }
             await app.close()
             console.log(JSON.stringify(keys))`,
            { ...userNpmEnv(), ...settings },
          )
          expect(uploaded.code, uploaded.stderr).toBe(0)
          const keys = JSON.parse(uploaded.stdout) as string[]
          const client = sdkClient({
            endpoint: settings.S3_UPLOAD_ENDPOINT!,
            region: settings.S3_UPLOAD_REGION!,
            credentials: { accessKeyId: settings.S3_UPLOAD_KEY!, secretAccessKey: settings.S3_UPLOAD_SECRET! },
          })
          expect(sha256(await readObject(client, settings.S3_UPLOAD_BUCKET!, keys[0]!))).toBe(sha256(small))
          expect(sha256(await readObject(client, settings.S3_UPLOAD_BUCKET!, keys[1]!))).toBe(sha256(large))

          // Ctrl-C in a terminal: SIGINT to the whole foreground group (npx, which dies of it, and the
          // store, which closes): every process of the group ends, and nothing is printed but the settings.
          const printedBefore = store.output()
          process.kill(-store.child.pid!, 'SIGINT')
          await store.exited
          await expect.poll(() => groupAlive(store.child.pid!), { timeout: 15_000, interval: 200 }).toBe(false)
          expect(store.output()).toBe(printedBefore)
        }, 300_000)
      })
    })
  })
})
