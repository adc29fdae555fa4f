// examples/nextjs (issue 9): the App Router app as a user has it, installed from the packed
// package into a fresh folder, built with `next build`, started with `next start`, and driven in
// Chromium: the updraft-s3/react page uploads through the updraft-s3/server catch-all route to s3rver.
import { execFile } from 'node:child_process'
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type AppProcess, appEnv, startApp } from '../dev/app-process.ts'
import { type ChromiumSession, launchChromium } from '../dev/launch-chromium.ts'
import { type S3rverInstance, startS3rver } from '../dev/s3rver.ts'
import { storeEnv } from '../dev/stores.ts'
import { ROOT } from '../scripts/build.ts'
import { uploadThroughPage } from './helpers/example-page.ts'
import { type InstalledProject, installProject } from './helpers/installed-package.ts'

const run = promisify(execFile)
const NEXT = join('node_modules', 'next', 'dist', 'bin', 'next')
const quiet = { NEXT_TELEMETRY_DISABLED: '1' }

let project: InstalledProject
let s3: S3rverInstance
let chromium: ChromiumSession
let app: AppProcess

beforeAll(async () => {
  s3 = await startS3rver()
  project = await installProject(join(ROOT, 'examples', 'nextjs'))
  // No S3_UPLOAD_* at build time, as in most CI builds: the route creates its handler on first use.
  await run(process.execPath, [NEXT, 'build'], {
    cwd: project.dir,
    env: appEnv(quiet),
    maxBuffer: 64 * 1024 * 1024,
  }).catch((error: { stdout: string; stderr: string }) => {
    throw new Error(`next build failed:\n${error.stdout}\n${error.stderr}`.slice(0, 8000))
  })
  chromium = await launchChromium()
  app = await startApp([process.execPath, NEXT, 'start', '--hostname', '127.0.0.1'], {
    cwd: project.dir,
    timeoutMs: 120_000,
    env: storeEnv(s3, quiet),
  })
}, 600_000)

afterAll(async () => {
  await app?.stop()
  await chromium?.close()
  await project?.remove()
  await s3?.stop()
})

describe('examples/nextjs after next build', () => {
  it('ships no AWS SDK to the browser', async () => {
    const chunks = join(project.dir, '.next', 'static', 'chunks')
    const files = (await readdir(chunks, { recursive: true })).filter((name) => name.endsWith('.js'))
    expect(files.length).toBeGreaterThan(0)
    let engineFound = false
    for (const name of files) {
      const code = await readFile(join(chunks, name), 'utf8')
      engineFound ||= code.includes('/api/s3-upload')
      expect(code.match(/.{0,80}(S3Client|@aws-sdk|@smithy).{0,80}/)?.[0], name).toBeUndefined()
    }
    expect(engineFound).toBe(true)
  })

  it('answers …/info through the catch-all route', async () => {
    const response = await fetch(`${app.origin}/api/s3-upload/info`)
    expect(response.status).toBe(200)
    expect(await response.json()).toMatchObject({ presigned: true })
  })

  it('uploads a small and a multipart file from Chromium; both read back byte for byte', async () => {
    await uploadThroughPage(chromium, app.origin, s3)
  })
})
