import { accessSync, constants } from 'node:fs'
import path from 'node:path'

/** Whether `bin` is an executable on PATH (or in the usual system directories, which a test's PATH may lack). */
export function onPath(bin: string): boolean {
  const dirs = (process.env.PATH ?? '').split(path.delimiter).filter(Boolean)
  for (const dir of [...dirs, '/usr/bin', '/usr/sbin', '/usr/local/bin']) {
    try {
      accessSync(path.join(dir, bin), constants.X_OK)
      return true
    } catch {
      // next
    }
  }
  return false
}

/** Throws (never skips) naming the command that installs what is missing. */
export function assertInstalled(what: string, binaries: readonly string[], install: string): void {
  const missing = binaries.filter((bin) => !onPath(bin))
  if (missing.length > 0)
    throw new Error(`${what} is not installed (missing: ${missing.join(', ')}). Install it with: ${install}`)
}
