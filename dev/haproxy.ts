import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from './app-process.ts'
import { assertInstalled } from './installed.ts'

/**
 * A real load balancer (Debian's `haproxy` 2.6) on loopback in front of several upload API
 * instances, round robin, as production runs them: each request may land on another instance.
 * It adds `X-Forwarded-For` with the client's address, which the instances trust (`trustProxy`)
 * so that a rate limit counts clients, not the balancer. Each reply names the instance that
 * answered in `X-Updraft-Instance` (`i0`, `i1`, …, in the order of `backends`).
 */
export interface LoadBalancer {
  /** `http://127.0.0.1:PORT` */
  origin: string
  stop(): Promise<void>
}

/** `port`: where it listens on loopback. @default a free one */
export async function startHaproxy(backends: readonly string[], port?: number): Promise<LoadBalancer> {
  assertInstalled('haproxy', ['haproxy'], 'apt-get install -y --no-install-recommends haproxy')
  port ??= await freePort()
  const dir = mkdtempSync(join(tmpdir(), 'updraft-haproxy-'))
  const config = join(dir, 'haproxy.cfg')
  writeFileSync(
    config,
    [
      'global',
      '  maxconn 4096',
      'defaults',
      '  mode http',
      '  timeout connect 2s',
      '  timeout client 30s',
      '  timeout server 30s',
      '  option forwardfor',
      // Each request is balanced on its own, even on a kept-alive connection from one client.
      '  option http-server-close',
      'frontend api',
      `  bind 127.0.0.1:${port}`,
      '  default_backend instances',
      'backend instances',
      '  balance roundrobin',
      '  http-response set-header X-Updraft-Instance %s',
      ...backends.map((origin, i) => `  server i${i} ${new URL(origin).host}`),
      '',
    ].join('\n'),
  )
  const child: ChildProcess = spawn('haproxy', ['-f', config, '-db'], { stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout!.on('data', (chunk) => (output += chunk))
  child.stderr!.on('data', (chunk) => (output += chunk))
  const origin = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 5_000
  for (;;) {
    if (child.exitCode !== null) throw new Error(`haproxy exited (${child.exitCode}):\n${output}`)
    const up = await fetch(origin, { signal: AbortSignal.timeout(1000) }).then(
      () => true,
      () => false,
    )
    if (up) break
    if (Date.now() > deadline) throw new Error(`haproxy did not answer on ${origin} within 5 s:\n${output}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return {
    origin,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve))
        child.kill('SIGKILL')
        await exited
      }
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
