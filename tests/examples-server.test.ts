// examples/hono and examples/worker as users run them (issue 9, "examples that are real apps"):
// each installed from the packed package into a fresh folder, its upload API started as its README
// says, and files uploaded through it with the engine, read back byte for byte: presigned single
// and multipart against s3rver and RGW, token mode through RGW's AssumeRole.
import { execFile } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { Miniflare } from 'miniflare'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { type AppProcess, appEnv, startApp } from '../dev/app-process.ts'
import { readObject, sdkClient, sha256, testBytes } from '../dev/s3-client.ts'
import { type S3rverInstance, startS3rver } from '../dev/s3rver.ts'
import { type RgwStore, storeEnv, type TestStore } from '../dev/stores.ts'
import { upload } from '../engine/index.ts'
import type { Strategy } from '../protocol/wire.ts'
import { ROOT } from '../scripts/build.ts'
import { type InstalledProject, installProject } from './helpers/installed-package.ts'

const run = promisify(execFile)
const MiB = 1024 * 1024
const rgw = inject('rgw')

const assumeRole = (store: RgwStore) => ({ S3_UPLOAD_STS_MODE: 'assume-role', S3_UPLOAD_ROLE_ARN: store.roleArn })

/** Uploads `size` bytes through `api` with the engine and reads the object back from `store`. */
async function uploadsThrough(api: string, store: TestStore, strategy: Strategy, size: number, seed: number) {
  const bytes = testBytes(size, seed)
  const result = await upload(new Blob([bytes]), {
    api,
    strategy,
    filename: `example-${seed}.bin`,
    contentType: 'application/octet-stream',
  })
  expect(result.bucket).toBe(store.bucket)
  const client = sdkClient(store)
  try {
    expect(sha256(await readObject(client, store.bucket, result.key))).toBe(sha256(bytes))
  } finally {
    client.destroy()
  }
}

let s3: S3rverInstance
beforeAll(async () => {
  s3 = await startS3rver()
})
afterAll(() => s3?.stop())

describe('examples/hono on Node', () => {
  let project: InstalledProject
  const apps: AppProcess[] = []
  const start = async (env: Record<string, string>) => {
    const app = await startApp([process.execPath, 'server.js'], { cwd: project.dir, env })
    apps.push(app)
    return `${app.origin}/api/s3-upload`
  }

  beforeAll(async () => {
    project = await installProject(join(ROOT, 'examples', 'hono'))
  }, 300_000)
  afterAll(async () => {
    await Promise.all(apps.map((app) => app.stop()))
    await project?.remove()
  })

  it('presigned, single and multipart, to s3rver', async () => {
    const api = await start(storeEnv(s3))
    await uploadsThrough(api, s3, 'presigned', 100_000, 91)
    await uploadsThrough(api, s3, 'presigned', 6 * MiB + 5, 92)
  })

  it('token mode through AssumeRole, multipart, to RGW', async () => {
    const api = await start(storeEnv(rgw, assumeRole(rgw)))
    await uploadsThrough(api, rgw, 'token', 6 * MiB + 7, 93)
  })
})

describe('examples/worker in workerd (miniflare)', () => {
  let project: InstalledProject
  let script: string
  let wrangler: { compatibility_date: string; compatibility_flags: string[] }
  const workers: Miniflare[] = []
  const start = async (env: Record<string, string>) => {
    const worker = new Miniflare({
      modules: true,
      script,
      compatibilityDate: wrangler.compatibility_date,
      compatibilityFlags: wrangler.compatibility_flags,
      bindings: env,
    })
    workers.push(worker)
    return new URL('/api/s3-upload', await worker.ready).href
  }

  beforeAll(async () => {
    project = await installProject(join(ROOT, 'examples', 'worker'), [], ['wrangler']) // miniflare stands in for wrangler dev
    // The build wrangler.jsonc runs: esbuild with the package's awsSdkXmlParser.
    await run(process.execPath, ['build.js'], { cwd: project.dir, env: appEnv() })
    script = await readFile(join(project.dir, 'dist', 'worker.js'), 'utf8')
    const jsonc = await readFile(join(project.dir, 'wrangler.jsonc'), 'utf8')
    wrangler = JSON.parse(jsonc.replace(/^\s*\/\/.*$/gm, ''))
  }, 300_000)
  afterAll(async () => {
    await Promise.all(workers.map((worker) => worker.dispose()))
    await project?.remove()
  })

  it('bundles no DOMParser-based XML parser, and no Node transport', () => {
    expect(script).not.toContain('new DOMParser')
    expect(script).not.toMatch(/from ["']node:http["']/)
  })

  it('presigned, single and multipart (CreateMultipartUpload and Complete parse XML in workerd), to RGW', async () => {
    const api = await start(storeEnv(rgw))
    await uploadsThrough(api, rgw, 'presigned', 100_000, 94)
    await uploadsThrough(api, rgw, 'presigned', 6 * MiB + 9, 95)
  })

  it('token mode through AssumeRole (an STS XML reply), to RGW', async () => {
    const api = await start(storeEnv(rgw, assumeRole(rgw)))
    await uploadsThrough(api, rgw, 'token', 100_000, 96)
  })

  it('answers 404 outside the upload API', async () => {
    const api = await start(storeEnv(s3))
    expect((await fetch(new URL('/elsewhere', api))).status).toBe(404)
  })
})
