// `npm start` as a person or a process manager runs it: a real npm process (npm → sh → tsx →
// node). Its settings come from the environment, and a SIGINT or SIGTERM sent to npm alone stops
// every process it started (issue 15: the server used to keep running, holding its ports).
import { type ChildProcess, execFileSync } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { type AddressInfo, createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { readObject, sdkClient } from '../dev/s3-client.ts'
import { uploadObject } from '../engine/index.ts'
import { groupAlive, killGroup, spawnGroup } from './helpers/process-group.ts'

const started: Array<{ child: ChildProcess; dataDir: string }> = []

afterEach(async () => {
  for (const { child, dataDir } of started.splice(0)) {
    killGroup(child)
    await rm(dataDir, { recursive: true, force: true })
  }
})

/** `npm start` in its own process group (as a terminal runs a job), on free ports and a fresh data folder. */
const npmStart = (env: Record<string, string> = {}) => npmRun('start', env)

/** `npm run <script>` as npmStart runs `npm start`. */
async function npmRun(script: string, env: Record<string, string> = {}) {
  const dataDir = await mkdtemp(join(tmpdir(), 'updraft-npm-start-'))
  const run = spawnGroup('npm', ['run', script], {
    ...process.env,
    PORT: '0',
    UPDRAFT_S3_PORT: '0',
    UPDRAFT_DATA_DIR: dataDir,
    ...env,
  })
  started.push({ child: run.child, dataDir })
  return run
}

async function untilReady(run: Awaited<ReturnType<typeof npmStart>>): Promise<string> {
  await expect.poll(run.output, { timeout: 90_000, interval: 200 }).toContain('Press Ctrl-C to stop.')
  return /Updraft demo: (http:\/\/\S+)/.exec(run.output())![1]!
}

describe('npm start', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)('stops every process it started when npm alone gets %s', async (signal) => {
    const run = await npmStart()
    const url = await untilReady(run)
    expect((await fetch(`${url}/api/s3-upload/info`)).status).toBe(200)

    process.kill(run.child.pid!, signal) // npm only, not its group: what `kill <pid>` or a process manager does
    await expect.poll(() => groupAlive(run.child.pid!), { timeout: 15_000, interval: 200 }).toBe(false)
    expect(run.output()).toContain('Stopped.')
    await expect(fetch(`${url}/api/s3-upload/info`)).rejects.toThrow()
  })

  it('stops too when npm itself is killed outright (SIGKILL: nothing is forwarded)', async () => {
    const run = await npmStart()
    await untilReady(run)
    process.kill(run.child.pid!, 'SIGKILL')
    await expect.poll(() => groupAlive(run.child.pid!), { timeout: 15_000, interval: 200 }).toBe(false)
    expect(run.output()).toContain('npm was stopped: stopping…')
  })

  it('takes its limits from UPDRAFT_MAX_FILE_SIZE and UPDRAFT_ALLOWED_TYPES, prints them and tells the page', async () => {
    const run = await npmStart({ UPDRAFT_MAX_FILE_SIZE: '30MiB', UPDRAFT_ALLOWED_TYPES: 'image/*, application/pdf' })
    const url = await untilReady(run)
    expect(run.output()).toContain('files       up to 30 MiB; types image/*, application/pdf')
    expect(await fetch(`${url}/api/s3-upload/info`).then((reply) => reply.json())).toMatchObject({
      maxFileSize: 31457280,
      allowedTypes: ['image/*', 'application/pdf'],
    })
    process.kill(run.child.pid!, 'SIGTERM')
    await expect.poll(() => groupAlive(run.child.pid!), { timeout: 15_000, interval: 200 }).toBe(false)
  })

  it("says in one line that the embedded store's port is taken, with the variable to change, and exits 1 (no stack)", async () => {
    // Another `npm start` (or anything) on the store's port: s3rver used to crash on it with a raw EADDRINUSE stack.
    const holder = createServer()
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve))
    const { port } = holder.address() as AddressInfo
    try {
      const run = await npmStart({ UPDRAFT_S3_PORT: String(port) })
      expect(await run.exited).toBe(1)
      const lines = run
        .output()
        .split('\n')
        .filter((line) => line.startsWith('updraft:') || /^\s+at /.test(line) || line.includes('EADDRINUSE'))
      expect(lines).toEqual([
        `updraft: could not start: port ${port} (the embedded store) is in use, perhaps by another npm start; set UPDRAFT_S3_PORT to another one`,
      ])
    } finally {
      holder.close()
    }
  })

  it('refuses a setting it cannot read, naming the variable, and exits 1', async () => {
    const run = await npmStart({ UPDRAFT_MAX_FILE_SIZE: 'lots' })
    expect(await run.exited).toBe(1)
    expect(run.output()).toContain(
      "updraft: could not start: UPDRAFT_MAX_FILE_SIZE must be a size such as 31457280, 30MiB or 500KB, got 'lots'",
    )
  })
})

describe('npm run store', () => {
  it('runs the embedded store alone and prints the settings that point an app at it: an object written with them reads back', async () => {
    const run = await npmRun('store')
    await expect.poll(run.output, { timeout: 90_000, interval: 200 }).toContain('Press Ctrl-C to stop.')
    // The bash line, pasted into a real bash as it is printed (a placeholder there once lost the whole line).
    const line = /bash, zsh: +(export .*)$/m.exec(run.output())?.[1]
    expect(line, run.output()).toBeDefined()
    const printed = execFileSync('bash', ['-c', `${line}\nenv`], { encoding: 'utf8' })
    const settings = Object.fromEntries(
      [...printed.matchAll(/^(S3_UPLOAD_[A-Z_]+)=(.*)$/gm)].map(([, name, value]) => [name!, value!]),
    )
    expect(Object.keys(settings).sort()).toEqual(
      [
        'S3_UPLOAD_BUCKET',
        'S3_UPLOAD_ENDPOINT',
        'S3_UPLOAD_FORCE_PATH_STYLE',
        'S3_UPLOAD_KEY',
        'S3_UPLOAD_REGION',
        'S3_UPLOAD_SECRET',
        'S3_UPLOAD_TICKET_SECRET',
      ].sort(),
    )
    // A generated secret, not a placeholder; the PowerShell line sets the same values.
    expect(settings.S3_UPLOAD_TICKET_SECRET).toMatch(/^[\w-]{43}$/)
    const powerShell = /PowerShell: +(.*)$/m.exec(run.output())?.[1]
    expect(
      Object.fromEntries(
        [...powerShell!.matchAll(/\$env:(S3_UPLOAD_[A-Z_]+)='([^']*)'/g)].map(([, name, value]) => [name!, value!]),
      ),
    ).toEqual(settings)
    const store = {
      endpoint: settings.S3_UPLOAD_ENDPOINT!,
      region: settings.S3_UPLOAD_REGION!,
      credentials: { accessKeyId: settings.S3_UPLOAD_KEY!, secretAccessKey: settings.S3_UPLOAD_SECRET! },
    }
    const bytes = new TextEncoder().encode(`written through the printed settings ${crypto.randomUUID()}`)
    await uploadObject(new Blob([bytes]), {
      ...store,
      bucket: settings.S3_UPLOAD_BUCKET!,
      key: 'store-check.txt',
      forcePathStyle: true,
    })
    expect(await readObject(sdkClient(store), settings.S3_UPLOAD_BUCKET!, 'store-check.txt')).toEqual(bytes)

    process.kill(run.child.pid!, 'SIGTERM')
    await expect.poll(() => groupAlive(run.child.pid!), { timeout: 15_000, interval: 200 }).toBe(false)
  })
})
