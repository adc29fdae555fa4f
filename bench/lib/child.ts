import { spawn } from 'node:child_process'
import { mkdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

export const BENCH_DIR = dirname(dirname(fileURLToPath(import.meta.url)))
/** Bundles the benchmarks build for themselves (ignored by git: bench/.gitignore). */
export const CACHE_DIR = join(BENCH_DIR, '.cache')

export interface UploadTarget {
  endpoint: string
  region: string
  bucket: string
  key: string
  credentials: { accessKeyId: string; secretAccessKey: string }
}

export type Contender =
  | 'updraft'
  | 'updraft-buffer'
  | 'updraft-stream'
  | 'updraft-fetch'
  | 'updraft-token'
  | 'updraft-presigned'
  | 'lib-storage'
  | 'fetch-ceiling'
  | 'http-ceiling'
  | 'http-ceiling-buffer'

export interface ClientSpec {
  contender: Contender
  target: UploadTarget
  /** In-memory bytes generated in the child, or a file read through `fs.openAsBlob`. */
  body: { kind: 'memory'; size: number } | { kind: 'file'; path: string }
  partSize: number
  queueSize: number
  /** Upload 1 KiB first (same client, same process) so one-time startup costs stay out of the figures. */
  warmUp?: boolean
  /** `updraft-token` and `updraft-presigned`: the upload API's URL (`http://…/api/s3-upload`). */
  api?: string
  /** `updraft`: per-part checksums (`updraft-s3/checksums`). */
  checksum?: 'crc32' | 'crc32c' | 'sha256' | 'md5'
  /** `updraft` with `checksum` only: `main` takes worker_threads away, so the parts are hashed on the upload's thread (the fallback). */
  checksumThread?: 'worker' | 'main'
  /** In-memory bytes handed to any contender as a Node `Buffer` instead of a Blob (the `*-buffer` contenders always get one). */
  bodyAs?: 'buffer'
  /** A PEM file the child trusts (NODE_EXTRA_CA_CERTS): the self-signed certificate of a TLS store. */
  ca?: string
  /** Write a CPU profile of the timed upload alone (node:inspector) to this `.cpuprofile` path. */
  profile?: string
}

export interface ClientResult {
  seconds: number
  bytes: number
  /** User + system CPU of the client process during the upload. */
  cpuSeconds: number
  /** Resident set just before the upload (modules loaded, body made, after a GC). */
  idleRss: number
  /** Highest resident set during the upload (VmHWM reset at its start). */
  peakRss: number
  /** Wall-clock time the upload started, ms since the epoch (to line it up with the link's tallies). */
  startedAt: number
}

const bundles = new Map<string, Promise<string>>()

/**
 * bench/clients/NAME.ts as one plain ES module: TypeScript from this repository inlined,
 * packages left to Node's resolver, so the measured process runs no loader (tsx would add its
 * own memory and CPU to every figure).
 */
export function clientBundle(name: string): Promise<string> {
  let bundle = bundles.get(name)
  if (!bundle) {
    bundle = (async () => {
      mkdirSync(CACHE_DIR, { recursive: true })
      const outfile = join(CACHE_DIR, `${name}.mjs`)
      await build({
        entryPoints: [join(BENCH_DIR, 'clients', `${name}.ts`)],
        outfile,
        bundle: true,
        platform: 'node',
        format: 'esm',
        target: 'node20',
        packages: 'external',
        // A .map beside the bundle, read only by bench/lib/cpu-profile.ts (nothing loads it at run time).
        sourcemap: 'external',
        sourcesContent: false,
        logLevel: 'error',
      })
      return outfile
    })()
    bundles.set(name, bundle)
  }
  return bundle
}

/** Runs one upload in a fresh `node` and returns its measurements; rejects with the child's stderr. */
export async function runClient(spec: ClientSpec, timeoutMs = 300_000): Promise<ClientResult> {
  const file = await clientBundle('node-upload')
  return new Promise((resolve, reject) => {
    const env = spec.ca ? { ...process.env, NODE_EXTRA_CA_CERTS: spec.ca } : process.env
    const child = spawn(process.execPath, ['--expose-gc', file, JSON.stringify(spec)], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env,
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk))
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk))
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      const line = stdout.trim().split('\n').at(-1) ?? ''
      if (code === 0 && line.startsWith('{')) return resolve(JSON.parse(line) as ClientResult)
      reject(new Error(`${spec.contender} client failed (${signal ?? `exit ${code}`}): ${stderr.trim().slice(-2000)}`))
    })
  })
}

export interface Service {
  url: string
  stop(): Promise<void>
}

/** Starts bench/clients/NAME.ts as a long-running child that prints its URL on its first line. */
export async function startService(name: string, config: unknown): Promise<Service> {
  const file = await clientBundle(name)
  const child = spawn(process.execPath, [file, JSON.stringify(config)], { stdio: ['ignore', 'pipe', 'pipe'] })
  let stderr = ''
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk))
  const url = await new Promise<string>((resolve, reject) => {
    let stdout = ''
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk
      const line = stdout.split('\n')[0]
      if (stdout.includes('\n') && line) resolve(line.trim())
    })
    child.on('exit', (code) => reject(new Error(`${name} exited (${code}) before listening: ${stderr.slice(-2000)}`)))
  })
  return {
    url,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve()
        child.once('exit', () => resolve())
        child.kill('SIGTERM')
      }),
  }
}
