// `npx updraft-s3 store` (`npm run store` in this repository): the embedded store alone (s3rver
// plus the ListParts and AbortMultipartUpload it lacks, one bucket whose CORS rule allows any
// origin), for an app of your own to upload to while you develop it. It prints the S3_UPLOAD_*
// settings that point the app at it, as lines that paste into bash, zsh and PowerShell.
import { randomBytes } from 'node:crypto'
import { join, resolve } from 'node:path'
import { importNeeding, MissingPackagesError, STORE_PACKAGES } from '../server/optional-peers.ts'
import type { EmbeddedS3 } from './embedded-s3.ts'

/** s3rver's own default port: a fixed one, so object URLs printed or copied survive a restart. */
export const DEFAULT_STORE_PORT = 4568

type Env = Record<string, string | undefined>

export interface StoreRun {
  /** Resolves when the store should stop. @default the process gets SIGINT or SIGTERM */
  until?: Promise<unknown>
}

/**
 * Starts the store on UPDRAFT_S3_PORT (default 4568), objects in UPDRAFT_DATA_DIR (default
 * `.data/s3` in the current folder, kept across runs), prints the settings, and runs until
 * `until`; resolves with the exit code: 0 once stopped, 1 when it could not start.
 */
export async function runStore(
  env: Env,
  print: (line: string) => void,
  { until = stopSignal() }: StoreRun = {},
): Promise<number> {
  let port: number
  try {
    port = portFrom(env, 'UPDRAFT_S3_PORT', DEFAULT_STORE_PORT)
  } catch (error) {
    print(`updraft: ${(error as Error).message}`)
    return 2
  }
  const directory = resolve(env.UPDRAFT_DATA_DIR || join('.data', 's3'))
  let store: EmbeddedS3
  try {
    const { startEmbeddedS3 } = await importNeeding(
      'npx updraft-s3 store',
      STORE_PACKAGES,
      () => import('./embedded-s3.ts'),
      { dev: true },
    )
    store = await startEmbeddedS3({ port, directory, log: (line) => print(`  ${line}`) })
  } catch (error) {
    print(couldNotStart(error))
    return 1
  }
  const { accessKeyId, secretAccessKey } = store.credentials
  print(`Embedded S3 store: ${store.endpoint} · bucket ${store.bucket} · objects in ${store.directory}`)
  const settings = {
    S3_UPLOAD_KEY: accessKeyId,
    S3_UPLOAD_SECRET: secretAccessKey,
    S3_UPLOAD_BUCKET: store.bucket,
    S3_UPLOAD_REGION: store.region,
    S3_UPLOAD_ENDPOINT: store.endpoint,
    S3_UPLOAD_FORCE_PATH_STYLE: 'true',
    // Generated here, so the lines paste as they are (a placeholder broke the whole line in bash).
    S3_UPLOAD_TICKET_SECRET: randomBytes(32).toString('base64url'),
  }
  print('Point your app at it (presigned mode: this store has no STS; keep it on loopback, its key is public).')
  print('In the shell that starts your app, paste the line for your shell:')
  print(`  bash, zsh:   ${shellLine(settings)}`)
  print(`  PowerShell:  ${powerShellLine(settings)}`)
  print('Then start your app in that shell, and check the settings with: npx updraft-s3 doctor')
  print('Press Ctrl-C to stop.')
  await until
  await store.close()
  return 0
}

function couldNotStart(error: unknown): string {
  if (error instanceof MissingPackagesError) return error.message
  const { code, port } = error as NodeJS.ErrnoException & { port?: number }
  if (code === 'EADDRINUSE')
    return `updraft: could not start the store: port ${port ?? '?'} is in use, perhaps by npm start; set UPDRAFT_S3_PORT to another one`
  return `updraft: could not start the store: ${error instanceof Error ? error.message : String(error)}`
}

/** Resolves on the first SIGINT or SIGTERM (Ctrl-C, a process manager), and stops listening for the other. */
function stopSignal(): Promise<void> {
  return new Promise((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop)
      process.off('SIGTERM', stop)
      resolve()
    }
    process.once('SIGINT', stop)
    process.once('SIGTERM', stop)
  })
}

/** `env[name]` as a port (0: a free one), or `fallback` when unset; a RangeError naming the variable otherwise. */
export function portFrom(env: Env, name: string, fallback: number): number {
  const value = env[name]
  if (value === undefined || value === '') return fallback
  const port = Number(value)
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new RangeError(`${name} must be a port number (0-65535), got '${value}'`)
  }
  return port
}

/** One `export` line for POSIX shells; every value single-quoted, so nothing in it is read as syntax. */
const shellLine = (settings: Record<string, string>) =>
  `export ${Object.entries(settings)
    .map(([name, value]) => `${name}='${value.replace(/'/g, `'\\''`)}'`)
    .join(' ')}`

/** The same for PowerShell: one `$env:` assignment per setting. */
const powerShellLine = (settings: Record<string, string>) =>
  Object.entries(settings)
    .map(([name, value]) => `$env:${name}='${value.replace(/'/g, "''")}'`)
    .join('; ')
