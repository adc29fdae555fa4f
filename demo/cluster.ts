// `npm run demo:cluster`: the demo as production runs past one process — INSTANCES (default 2)
// upload API instances, each its own process, behind a real load balancer (haproxy, round robin:
// each request may land on another instance), sharing one Redis (the rate limit, the sweep's lock)
// and one ticket secret, in front of one store (S3_UPLOAD_*, else an embedded s3rver). Upload on
// http://localhost:PORT and watch the log say which instance answered each step.
// Needs Debian's haproxy and redis-server (docs/operations.md, "Several instances").

import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { startEmbeddedS3 } from '../cli/embedded-s3.ts'
import { freePort } from '../dev/app-process.ts'
import { startHaproxy } from '../dev/haproxy.ts'
import { startRedis } from '../dev/redis-server.ts'
import { storeEnv } from '../dev/stores.ts'
import { ensureDemoBuilt, PROJECT_ROOT } from './build-page.ts'
import { stopWithLauncher } from './launcher.ts'
import { demoSettings } from './settings.ts'

async function main() {
  const settings = demoSettings(process.env)
  const count = Number(process.env.INSTANCES ?? 2)
  if (!Number.isInteger(count) || count < 1 || count > 8)
    throw new RangeError(`INSTANCES must be a whole number from 1 to 8, got '${process.env.INSTANCES}'`)
  await ensureDemoBuilt((line) => console.log(line))
  const redis = await startRedis()
  const configured = !!process.env.S3_UPLOAD_BUCKET
  const store = configured
    ? undefined
    : await startEmbeddedS3({ directory: settings.dataDir, port: settings.storePort })
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    REDIS_URL: redis.url,
    // Every instance must sign tickets with the same secret: an upload started on one is finished on another.
    S3_UPLOAD_TICKET_SECRET: process.env.S3_UPLOAD_TICKET_SECRET ?? randomBytes(32).toString('base64url'),
    ...(store && storeEnv(store)),
  }
  const instances: ChildProcess[] = []
  const origins: string[] = []
  for (let i = 0; i < count; i++) {
    const port = await freePort()
    instances.push(
      spawn(process.execPath, ['--import', 'tsx', 'demo/instance.ts'], {
        cwd: PROJECT_ROOT,
        env: { ...env, PORT: String(port), UPDRAFT_INSTANCE: `i${i}` },
        stdio: 'inherit',
      }),
    )
    origins.push(`http://127.0.0.1:${port}`)
  }
  await Promise.all(origins.map(untilAnswers))
  const balancer = await startHaproxy(origins, settings.port)

  let stopping = false
  const stop = async (reason: string) => {
    if (stopping) process.exit(130)
    stopping = true
    console.log(`\n${reason}: stopping…`)
    await balancer.stop()
    for (const child of instances) child.kill('SIGTERM')
    await redis.stop()
    await store?.close()
    process.exit(0)
  }
  process.on('SIGINT', () => void stop('SIGINT'))
  process.on('SIGTERM', () => void stop('SIGTERM'))
  stopWithLauncher(() => void stop('npm was stopped'))

  console.log(`Updraft demo, ${count} instances behind haproxy: http://localhost:${settings.port}`)
  console.log(`  instances ${origins.join(', ')} (each reply's X-Updraft-Instance header names the one that answered)`)
  console.log(`  shared    Redis at ${redis.url} (the rate limit, the sweep's lock) and one ticket secret`)
  console.log(
    `  storage   ${store ? `embedded s3rver at ${store.endpoint} · bucket ${store.bucket}` : 'from S3_UPLOAD_*'}`,
  )
  console.log('Press Ctrl-C to stop.')
}

/** An instance is up once it answers its /info. */
async function untilAnswers(origin: string) {
  const deadline = Date.now() + 60_000
  while (Date.now() < deadline) {
    const up = await fetch(`${origin}/api/s3-upload/info`, { signal: AbortSignal.timeout(1000) }).then(
      (response) => response.ok,
      () => false,
    )
    if (up) return
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  throw new Error(`the instance at ${origin} did not start within 60 s`)
}

main().catch((error: unknown) => {
  console.error('updraft: could not start:', error)
  process.exit(1)
})
