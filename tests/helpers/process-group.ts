import { type ChildProcess, spawn } from 'node:child_process'

const ROOT = new URL('../..', import.meta.url).pathname

/** A command of this repository's, run as a terminal runs a job, and what it has printed so far. */
export interface GroupProcess {
  child: ChildProcess
  /** stdout and stderr, interleaved as they came. */
  output(): string
  exited: Promise<number | null>
}

/** Runs `command` from `cwd` (the repository root) in its own process group (so the whole group can be signalled or killed). */
export function spawnGroup(command: string, args: string[], env: NodeJS.ProcessEnv, cwd = ROOT): GroupProcess {
  const child = spawn(command, args, { cwd, detached: true, env, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout!.on('data', (chunk) => (output += chunk))
  child.stderr!.on('data', (chunk) => (output += chunk))
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  return { child, output: () => output, exited }
}

/** Whether any process of the group led by `pid` is still there. */
export function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0)
    return true
  } catch {
    return false
  }
}

/** Kills what is left of a group (a test's cleanup). */
export function killGroup(child: ChildProcess): void {
  if (groupAlive(child.pid!)) process.kill(-child.pid!, 'SIGKILL')
}
