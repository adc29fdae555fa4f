import { type ChildProcess, spawn } from 'node:child_process'
import { createServer } from 'node:net'

export interface AppProcess {
  /** `http://127.0.0.1:PORT` */
  origin: string
  /** What the process printed so far (stdout and stderr), for failure messages. */
  output(): string
  /** SIGTERM, then SIGKILL after 5 s; resolves once the process has exited. */
  stop(): Promise<void>
}

/**
 * The environment an app gets, as if started from a shell: without vitest's NODE_ENV=test (Vite
 * and Next.js would build a development bundle) and its own variables.
 */
export function appEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => name !== 'NODE_ENV' && !name.startsWith('VITEST')),
  )
  // A cast: Next.js's types (reached through next-s3-upload's) make ProcessEnv's NODE_ENV required.
  return { ...env, ...extra } as NodeJS.ProcessEnv
}

/** A free loopback port (the OS picks one; it is free again by the time the app binds it, barring a race). */
export async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

/**
 * Starts an app as its users would (`node server.js`, `next start`) with PORT and HOST set, and
 * waits until it answers HTTP at `readyPath`: any status counts. Fails with the app's output if
 * it exits first or does not answer within `timeoutMs`. `command` may be made from the port (for
 * a tool that takes it as an argument, not from PORT). A command that runs the app as a child
 * (`npm start`, `npx wrangler dev`) gets a process group of its own, and stopping signals the group.
 */
export async function startApp(
  command: string[] | ((port: number) => string[]),
  {
    cwd,
    env = {},
    readyPath = '/',
    timeoutMs = 60_000,
  }: { cwd: string; env?: Record<string, string>; readyPath?: string; timeoutMs?: number },
): Promise<AppProcess> {
  const port = await freePort()
  const [file, ...args] = typeof command === 'function' ? command(port) : command
  const group = file === 'npm' || file === 'npx'
  const child = spawn(file!, args, {
    cwd,
    env: appEnv({ PORT: String(port), HOST: '127.0.0.1', ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: group,
  })
  let output = ''
  child.stdout!.on('data', (chunk) => (output += chunk))
  child.stderr!.on('data', (chunk) => (output += chunk))
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const app: AppProcess = {
    origin: `http://127.0.0.1:${port}`,
    output: () => output,
    stop: () => stop(child, exited, group),
  }
  const name = [file, ...args].join(' ')

  const deadline = Date.now() + timeoutMs
  while (true) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(
        `${name} exited (${child.exitCode ?? child.signalCode}) before answering:\n${output.slice(-4000)}`,
      )
    }
    const answered = await fetch(`${app.origin}${readyPath}`, { signal: AbortSignal.timeout(2000) }).then(
      () => true,
      () => false,
    )
    if (answered) return app
    if (Date.now() > deadline) {
      await app.stop()
      throw new Error(`${name} did not answer on ${app.origin} within ${timeoutMs} ms:\n${output.slice(-4000)}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
}

async function stop(child: ChildProcess, exited: Promise<void>, group: boolean): Promise<void> {
  const signal = (name: NodeJS.Signals) => {
    try {
      if (group) process.kill(-child.pid!, name)
      else child.kill(name)
    } catch {
      // already gone
    }
  }
  if (child.exitCode !== null || child.signalCode !== null) {
    if (group) signal('SIGKILL') // what the command started may outlive it
    return
  }
  signal('SIGTERM')
  const timer = setTimeout(() => signal('SIGKILL'), 5000)
  await exited
  clearTimeout(timer)
  if (group) signal('SIGKILL')
}
