import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from './app-process.ts'
import { assertInstalled } from './installed.ts'

/**
 * A throwaway Redis (Debian's `redis-server` 7.0) on a free loopback port, with no persistence,
 * for the tests of several upload API instances sharing one rate limit and one sweep lock.
 */
export interface RedisServer {
  url: string
  port: number
  /** Kills the server as a crash would (SIGKILL); clients see refused connections. */
  kill(): Promise<void>
  /** Starts it again, empty, on the same port, so clients reconnect to the same address. */
  restart(): Promise<void>
  /** Kills it and removes its directory; idempotent. */
  stop(): Promise<void>
}

export async function startRedis(): Promise<RedisServer> {
  assertInstalled('Redis', ['redis-server'], 'apt-get install -y --no-install-recommends redis-server')
  const port = await freePort()
  const dir = mkdtempSync(join(tmpdir(), 'updraft-redis-'))
  let child: ChildProcess | undefined
  const restart = async () => {
    child = spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        '--daemonize',
        'no',
        '--dir',
        dir,
      ],
      {
        stdio: 'ignore',
      },
    )
    await untilAnswers(port)
  }
  const kill = async () => {
    const running = child
    child = undefined
    if (!running || running.exitCode !== null || running.signalCode !== null) return
    const exited = new Promise((resolve) => running.once('exit', resolve))
    running.kill('SIGKILL')
    await exited
  }
  await restart()
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    kill,
    restart,
    async stop() {
      await kill()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** PING until PONG, for up to 5 s. */
async function untilAnswers(port: number): Promise<void> {
  const deadline = Date.now() + 5_000
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1')
      socket.once('error', () => resolve(false))
      socket.once('data', (data) => {
        socket.destroy()
        resolve(String(data).startsWith('+PONG'))
      })
      socket.write('PING\r\n')
    })
    if (ok) return
    if (Date.now() > deadline) throw new Error(`redis-server did not answer on port ${port} within 5 s`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}
