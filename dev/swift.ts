// Throwaway OpenStack Swift (Debian 2.30) with its S3 API, for tests.
//
//   const swift = await startSwift()   // 2-8 s: account, container, object and proxy servers
//   ...swift.endpoint / swift.accessKeyId / swift.secretAccessKey, path-style, us-east-1...
//   await swift.stop()                 // kills the four servers by PID, removes the state dir
//
// Everything lives in a fresh dir under os.tmpdir() (rings, configs, the one device, logs):
// nothing in /etc/swift or /srv is read or written, and no systemd unit is started. A watchdog
// stops the servers if the test process dies without stop().
//
// Swift's S3 layer (the s3api middleware) differs from S3 where a browser feels it, and the
// tests name each difference: PutBucketCors answers 501 NotImplemented (CORS is this proxy's
// config: cors_allow_origin and cors_expose_headers in [DEFAULT], cors_preflight_allow_origin in
// [filter:s3api]); error replies carry no CORS headers; ETag is exposed to every allowed origin
// (no bucket can hide it); x-amz-checksum-* values are not verified; no STS.
import { execFile, spawn } from 'node:child_process'
import { accessSync, constants, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'

export const SWIFT_INSTALL_HINT =
  'apt-get install -y --no-install-recommends swift swift-proxy swift-account swift-container swift-object'

const SERVERS = ['account', 'container', 'object', 'proxy'] as const
const REQUIRED_BINARIES = ['swift-ring-builder', ...SERVERS.map((name) => `swift-${name}-server`)]

/** tempauth's user: `user_test_tester = testing .admin` is access key `test:tester`, secret `testing`. */
export const SWIFT_CREDENTIALS = { accessKeyId: 'test:tester', secretAccessKey: 'testing' }

export interface SwiftServer {
  /** http://127.0.0.1:PORT, the proxy (path-style only: use forcePathStyle: true). */
  endpoint: string
  /** Swift's s3api accepts any region by default (location = us-east-1). */
  region: string
  accessKeyId: string
  secretAccessKey: string
  /** Rings, configs, the device and the servers' logs (LOG/<server>.log). */
  stateDir: string
  /** Kills the four servers and the watchdog by PID and removes stateDir; idempotent. */
  stop(): Promise<void>
}

function onPath(bin: string): boolean {
  const dirs = (process.env.PATH ?? '').split(path.delimiter).filter(Boolean)
  return [...dirs, '/usr/bin', '/usr/sbin', '/usr/local/bin'].some((dir) => {
    try {
      accessSync(path.join(dir, bin), constants.X_OK)
      return true
    } catch {
      return false
    }
  })
}

/** Throws (never skips) when Swift's servers are not installed, with the command that installs them. */
export function assertSwiftInstalled(): void {
  const missing = REQUIRED_BINARIES.filter((bin) => !onPath(bin))
  if (missing.length > 0) {
    throw new Error(
      `OpenStack Swift is not installed (missing: ${missing.join(', ')}). Install it with: ${SWIFT_INSTALL_HINT}`,
    )
  }
}

/** Reserves `n` distinct free loopback ports (all held at once, then released). */
async function freePorts(n: number): Promise<number[]> {
  const servers = Array.from({ length: n }, () => net.createServer())
  try {
    return await Promise.all(
      servers.map(
        (server) =>
          new Promise<number>((resolve, reject) => {
            server.once('error', reject)
            server.listen(0, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port))
          }),
      ),
    )
  } finally {
    await Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))))
  }
}

const storageConf = (dir: string, name: string, port: number) => `[DEFAULT]
bind_ip = 127.0.0.1
bind_port = ${port}
swift_dir = ${dir}
devices = ${dir}/srv
mount_check = false
workers = 0
log_level = WARNING

[pipeline:main]
pipeline = ${name}-server

[app:${name}-server]
use = egg:swift#${name}
`

// The pipeline of Swift's own S3 docs (s3api before tempauth). CORS is the proxy's: Swift's S3
// layer has no PutBucketCors.
const FILTERS = [
  'catch_errors',
  'gatekeeper',
  'healthcheck',
  'proxy-logging',
  'cache',
  'listing_formats',
  'bulk',
  'tempurl',
  'ratelimit',
  's3api',
  'tempauth',
  'copy',
  'slo',
  'dlo',
  'versioned_writes',
]
const proxyConf = (dir: string, port: number) => `[DEFAULT]
bind_ip = 127.0.0.1
bind_port = ${port}
swift_dir = ${dir}
workers = 0
log_level = WARNING
cors_allow_origin = *
cors_expose_headers = etag

[pipeline:main]
pipeline = ${FILTERS.join(' ')} proxy-logging proxy-server

[app:proxy-server]
use = egg:swift#proxy
account_autocreate = true

[filter:tempauth]
use = egg:swift#tempauth
user_test_tester = ${SWIFT_CREDENTIALS.secretAccessKey} .admin

[filter:s3api]
use = egg:swift#s3api
cors_preflight_allow_origin = *

${FILTERS.filter((name) => name !== 's3api' && name !== 'tempauth')
  .map((name) => `[filter:${name}]\nuse = egg:swift#${name === 'cache' ? 'memcache' : name.replace('-', '_')}\n`)
  .join('\n')}`

const SWIFT_CONF = `[swift-hash]
swift_hash_path_suffix = updraft-tests
swift_hash_path_prefix = updraft-tests

[storage-policy:0]
name = Policy-0
default = yes
`

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

function kill(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL')
  } catch {
    /* already gone */
  }
}

const logTails = (dir: string) =>
  SERVERS.map((name) => {
    let text = ''
    try {
      text = readFileSync(path.join(dir, 'log', `${name}.log`), 'utf8')
    } catch {
      /* not started */
    }
    return `--- ${name}.log\n${text.slice(-2000)}`
  }).join('\n')

async function startOnce(): Promise<SwiftServer> {
  const [account, container, object, proxy] = await freePorts(4)
  const ports = { account: account!, container: container!, object: object! }
  const dir = mkdtempSync(path.join(os.tmpdir(), 'updraft-swift-'))
  mkdirSync(path.join(dir, 'srv', 'd1'), { recursive: true })
  mkdirSync(path.join(dir, 'log'))
  writeFileSync(path.join(dir, 'swift.conf'), SWIFT_CONF)
  const builder = promisify(execFile)
  // One-replica rings, one device each (`create <part power> <replicas> <min hours>`).
  for (const [name, port] of Object.entries(ports)) {
    const file = path.join(dir, `${name}.builder`)
    await builder('swift-ring-builder', [file, 'create', '10', '1', '1'])
    await builder('swift-ring-builder', [file, 'add', `r1z1-127.0.0.1:${port}/d1`, '100'])
    await builder('swift-ring-builder', [file, 'rebalance'])
    writeFileSync(path.join(dir, `${name}-server.conf`), storageConf(dir, name, port))
  }
  writeFileSync(path.join(dir, 'proxy-server.conf'), proxyConf(dir, proxy!))

  const pids: number[] = []
  const stop = () => {
    pids.forEach(kill)
    if (!process.env.UPDRAFT_SWIFT_KEEP) rmSync(dir, { recursive: true, force: true })
  }
  for (const name of SERVERS) {
    const log = openSync(path.join(dir, 'log', `${name}.log`), 'a')
    const child = spawn(`swift-${name}-server`, [path.join(dir, `${name}-server.conf`)], {
      detached: true,
      stdio: ['ignore', log, log],
    })
    child.unref()
    pids.push(child.pid!)
  }
  // Kill the servers if this process dies without stop() (the test runner crashed).
  const watchdog = spawn(
    'bash',
    [
      '-c',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: bash's own ${@:3}, not a template
      'while kill -0 "$1" 2>/dev/null && [ -d "$2" ]; do sleep 1; done; kill -9 ${@:3} 2>/dev/null; rm -rf "$2"',
      '_',
      String(process.pid),
      dir,
      ...pids.map(String),
    ],
    { detached: true, stdio: 'ignore' },
  )
  watchdog.unref()
  pids.push(watchdog.pid!)

  const endpoint = `http://127.0.0.1:${proxy}`
  const deadline = Date.now() + 60_000
  for (;;) {
    const dead = SERVERS.filter((_, i) => !alive(pids[i]!))
    if (dead.length > 0 || Date.now() > deadline) {
      const why = dead.length > 0 ? `${dead.join(', ')} exited` : 'not ready after 60 s'
      const tails = logTails(dir)
      stop()
      throw new Error(`starting Swift failed (${why}):\n${tails}`)
    }
    // The proxy's healthcheck answers before the storage servers do: probe one through the S3 API.
    const ready = await fetch(`${endpoint}/healthcheck`).then(
      (reply) => reply.ok,
      () => false,
    )
    if (ready && (await storageReady(ports))) break
    await new Promise((resolve) => setTimeout(resolve, 100))
  }

  let stopped: Promise<void> | undefined
  return {
    endpoint,
    region: 'us-east-1',
    ...SWIFT_CREDENTIALS,
    stateDir: dir,
    stop() {
      stopped ??= Promise.resolve().then(stop)
      return stopped
    },
  }
}

/** Each storage server listens (any HTTP reply will do: they have no healthcheck filter). */
async function storageReady(ports: Record<string, number>): Promise<boolean> {
  const replies = await Promise.all(
    Object.values(ports).map((port) =>
      fetch(`http://127.0.0.1:${port}/healthcheck`).then(
        () => true,
        () => false,
      ),
    ),
  )
  return replies.every(Boolean)
}

/**
 * Starts a fresh Swift with the S3 API on free loopback ports. Throws with the install command if
 * Swift is missing, or with the servers' log tails if it does not come up.
 */
export async function startSwift(): Promise<SwiftServer> {
  assertSwiftInstalled()
  const t0 = Date.now()
  try {
    return await startOnce()
  } catch (first) {
    // The ports are released before the servers bind them: another process may take one in
    // between, which fails fast. Retry once with new ports, never after a slow failure.
    if (Date.now() - t0 > 20_000) throw first
    return startOnce().catch(() => {
      throw first
    })
  }
}
