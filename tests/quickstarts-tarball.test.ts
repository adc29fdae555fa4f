// Issue 35, "quick starts without a clone": every README quick start run as written, from the
// packed package alone. Each gets a fresh folder outside the repository (nothing there resolves
// into this repository's node_modules), runs its block's commands in order (`npm install` from the
// registry, `updraft-s3` replaced by the tarball; `npx updraft-s3 init`; the build), starts the app
// with the block's last command against s3rver, and uploads a small and a multipart file through
// the page in Chromium, reading both back byte for byte. The Worker runs under `wrangler dev`,
// the Cloudflare tool its quick start installs, with the settings in .dev.vars.
import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { EXAMPLES_DIR, QUICK_STARTS, type QuickStart, templateFiles } from '../cli/init.ts'
import { type AppProcess, appEnv, startApp } from '../dev/app-process.ts'
import { type ChromiumSession, launchChromium } from '../dev/launch-chromium.ts'
import { type S3rverInstance, startS3rver } from '../dev/s3rver.ts'
import { storeEnv } from '../dev/stores.ts'
import { quickStartCommands } from './helpers/doc-snippets.ts'
import { uploadThroughPage } from './helpers/example-page.ts'
import { packTarball } from './helpers/installed-package.ts'

const run = promisify(execFile)

let s3: S3rverInstance
let chromium: ChromiumSession
let tarball: string
/** The store's settings, as the local store prints them (its ticket secret generated). */
let settings: Record<string, string>
/** What the tools are told: no telemetry, no update checks (the test reads what they do, not what is new). */
const QUIET = {
  NEXT_TELEMETRY_DISABLED: '1',
  WRANGLER_SEND_METRICS: 'false',
  npm_config_update_notifier: 'false',
  npm_config_fund: 'false',
  npm_config_audit: 'false',
}

beforeAll(async () => {
  tarball = await packTarball()
  s3 = await startS3rver()
  settings = storeEnv(s3, { S3_UPLOAD_TICKET_SECRET: randomBytes(32).toString('base64url') })
  chromium = await launchChromium()
}, 300_000)

afterAll(async () => {
  await chromium?.close()
  await s3?.stop()
})

/** Seconds each quick start's `npm install` lines took, printed at the end (the test's CI cost). */
const installSeconds: string[] = []
afterAll(() => console.log(`quick-start installs: ${installSeconds.join(', ')}`))

const quickStarts = quickStartCommands()

describe.each(Object.keys(QUICK_STARTS) as QuickStart[])(
  'the README quick start %s, from the tarball alone',
  (name) => {
    let base: string
    let dir: string
    let app: AppProcess | undefined

    afterAll(async () => {
      await app?.stop()
      if (base) await rm(base, { recursive: true, force: true })
    })

    it('runs as written and uploads through its page in Chromium, both files read back byte for byte', {
      timeout: 900_000,
    }, async () => {
      const commands = quickStarts.get(name)
      expect(commands, `README.md and docs/quickstarts.md have no <!-- quickstart: ${name} --> block`).toBeDefined()
      base = await mkdtemp(join(tmpdir(), `updraft-quickstart-${name}-`))
      const localTarball = join(base, basename(tarball))
      await copyFile(tarball, localTarball)
      dir = base
      const env = appEnv(QUIET)
      const start = commands!.at(-1)!
      let installing = 0
      for (const words of commands!.slice(0, -1)) {
        const [tool, ...args] = words
        if (tool === 'mkdir') await mkdir(join(dir, args[0]!))
        else if (tool === 'cd') dir = join(dir, args[0]!)
        else {
          expect(['npm', 'npx'], words.join(' ')).toContain(tool)
          const isInstall = tool === 'npm' && args[0] === 'install'
          // `updraft-s3` from the registry is the package under test: the tarball stands in for it.
          const used = isInstall ? args.map((word) => (word === 'updraft-s3' ? localTarball : word)) : args
          const began = performance.now()
          await run(tool!, used, { cwd: dir, env, maxBuffer: 64 * 1024 * 1024 }).catch(
            (error: { stdout?: string; stderr?: string }) => {
              throw new Error(
                `${words.join(' ')} failed in ${dir}:\n${error.stdout ?? ''}\n${error.stderr ?? ''}`.slice(-8000),
              )
            },
          )
          if (isInstall) installing += performance.now() - began
          if (tool === 'npx' && args[1] === 'init') await expectExampleFiles(name, dir)
        }
      }
      installSeconds.push(`${name} ${(installing / 1000).toFixed(1)} s`)
      const manifest = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8'))
      expect(manifest.dependencies['updraft-s3']).toMatch(/^file:/) // the tarball, not the registry

      if (start.join(' ') === 'npx wrangler dev') {
        // .dev.vars, one NAME=value a line, as the quick start says; wrangler dev takes its port as an argument.
        await writeFile(
          join(dir, '.dev.vars'),
          Object.entries(settings)
            .map(([key, value]) => `${key}=${value}`)
            .join('\n'),
        )
        app = await startApp((port) => ['npx', 'wrangler', 'dev', '--port', String(port), '--ip', '127.0.0.1'], {
          cwd: dir,
          env: QUIET,
          timeoutMs: 180_000,
        })
      } else {
        expect(start.join(' ')).toBe('npm start')
        app = await startApp(['npm', 'start'], { cwd: dir, env: { ...QUIET, ...settings }, timeoutMs: 120_000 })
      }
      await uploadThroughPage(chromium, app.origin, s3)
      if (name === 'next' || name === 'fastify') await expectButtonUnderCssReset(app.origin)
    })
  },
)

/** Tailwind 4's preflight (create-next-app's default template), its rules that reach a button. */
const PREFLIGHT = `*, ::after, ::before, ::backdrop, ::file-selector-button { box-sizing: border-box; margin: 0; padding: 0; border: 0 solid; }
button, input, select, optgroup, textarea, ::file-selector-button { font: inherit; color: inherit; border-radius: 0; background-color: transparent; opacity: 1; }`

/** The React pages' "Upload files" still looks like a button (a border, padding, a background) under that reset, where a bare button is plain text. */
async function expectButtonUnderCssReset(origin: string) {
  const page = await chromium.newPage()
  try {
    await page.goto(origin)
    await page.addStyleTag({ content: PREFLIGHT })
    const look = (button: Element) => {
      const style = getComputedStyle(button)
      return { border: style.borderTopWidth, padding: style.paddingLeft, background: style.backgroundColor }
    }
    await page.evaluate(
      () => (document.body.appendChild(document.createElement('button')).textContent = 'A bare button'),
    )
    const bare = await page.getByRole('button', { name: 'A bare button' }).evaluate(look)
    expect(bare).toEqual({ border: '0px', padding: '0px', background: 'rgba(0, 0, 0, 0)' }) // the reset does strip a bare button
    const ours = await page.getByRole('button', { name: 'Upload files' }).evaluate(look)
    expect(ours.border).not.toBe('0px')
    expect(ours.padding).not.toBe('0px')
    expect(ours.background).not.toBe('rgba(0, 0, 0, 0)')
  } finally {
    await page.close()
  }
}

/** `init` wrote the example's own files (the package carries examples/), package.json aside (it merges scripts into the folder's). */
async function expectExampleFiles(name: QuickStart, dir: string) {
  const { folder } = QUICK_STARTS[name]
  const paths = await templateFiles(join(EXAMPLES_DIR, folder))
  expect(paths.length).toBeGreaterThan(2)
  for (const path of paths) {
    if (path === 'package.json') continue
    expect(await readFile(join(dir, path), 'utf8'), path).toBe(await readFile(join(EXAMPLES_DIR, folder, path), 'utf8'))
  }
}
