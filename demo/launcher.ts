import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { isAlive } from '../scripts/fresh-build.ts'

/**
 * `npm start` runs npm → sh → tsx → node. A SIGINT or SIGTERM sent to npm alone (a process
 * manager, `kill <npm pid>`) is forwarded by npm to sh, which dies without passing it on: tsx
 * and this process were left running, holding the ports. So the process watches the chain of
 * its ancestors up to npm, and stops as if signalled when any of them is gone.
 * Returns a function that stops watching; does nothing when not started by npm.
 */
export function stopWithLauncher(stop: () => void, env: NodeJS.ProcessEnv = process.env, everyMs = 500): () => void {
  if (!env.npm_lifecycle_event) return () => {}
  const chain = launcherChain(process.ppid)
  if (chain.length === 0) return () => {}
  const timer = setInterval(() => {
    if (chain.every(isAlive)) return
    clearInterval(timer)
    stop()
  }, everyMs)
  timer.unref()
  return () => clearInterval(timer)
}

/** The ancestors from `pid` up to and including the npm process; empty when none is found. */
function launcherChain(pid: number): number[] {
  const chain: number[] = []
  for (let current = pid; current > 1 && chain.length < 8; ) {
    const info = processInfo(current)
    if (!info) return []
    chain.push(current)
    if (/(^|[\s/])npm(-cli\.js)?(\s|$)/.test(info.command)) return chain
    current = info.ppid
  }
  return []
}

/** Parent and command line: /proc on Linux, `ps` elsewhere (macOS, the BSDs). */
function processInfo(pid: number): { ppid: number; command: string } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // The command name sits in parentheses and may hold spaces: the fields after it are fixed.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
    const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ')
    return { ppid, command }
  } catch {
    try {
      const [ppid, ...command] = execFileSync('ps', ['-o', 'ppid=,args=', '-p', String(pid)], { encoding: 'utf8' })
        .trim()
        .split(/\s+/)
      return { ppid: Number(ppid), command: command.join(' ') }
    } catch {
      return undefined
    }
  }
}
