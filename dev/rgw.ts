// Throwaway single-node Ceph RADOS Gateway (RGW 16.x) for tests.
//
//   const rgw = await startRgw()   // ~1.2-2 s: 1 mon + 1 memstore OSD + radosgw on free loopback ports
//   ...use rgw.endpoint / rgw.accessKeyId / rgw.secretAccessKey / rgw.roleArn...
//   await rgw.stop()               // SIGKILLs the daemons, removes the state dir
//
// All cluster state lives in a fresh dir under os.tmpdir(); nothing in /etc/ceph
// or /var/lib/ceph is used. See dev/rgw/bootstrap.sh.
import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

export interface RgwServer {
  /** http://127.0.0.1:PORT (path-style only: use forcePathStyle: true) */
  endpoint: string
  /** region to sign with; RGW does not check it */
  region: string
  accessKeyId: string
  secretAccessKey: string
  /** role the user may assume via STS AssumeRole (role policy: s3:* on *) */
  roleArn: string
  /** cluster state + logs (log/client.rgw.a.log is the radosgw log) */
  stateDir: string
  /** kill mon/osd/radosgw and remove stateDir; idempotent */
  stop(): Promise<void>
}

const INSTALL_HINT = 'apt-get install -y --no-install-recommends radosgw ceph-mon ceph-osd'
const REQUIRED_BINARIES = ['radosgw', 'radosgw-admin', 'ceph-mon', 'ceph-osd', 'ceph', 'monmaptool', 'ceph-authtool']

const BOOTSTRAP = path.join(path.dirname(fileURLToPath(import.meta.url)), 'rgw', 'bootstrap.sh')

function onPath(bin: string): boolean {
  const dirs = (process.env.PATH ?? '').split(path.delimiter).filter(Boolean)
  for (const d of [...dirs, '/usr/bin', '/usr/sbin', '/usr/local/bin']) {
    try {
      accessSync(path.join(d, bin), constants.X_OK)
      return true
    } catch {
      /* next */
    }
  }
  return false
}

/** Throws (never skips) when the Ceph binaries needed by startRgw() are missing. */
export function assertRgwInstalled(): void {
  const missing = REQUIRED_BINARIES.filter((b) => !onPath(b))
  if (missing.length > 0) {
    throw new Error(
      `Ceph RADOS Gateway is not installed (missing: ${missing.join(', ')}). ` + `Install it with: ${INSTALL_HINT}`,
    )
  }
}

/** Reserve `n` distinct free loopback ports (all held open at once, then released). */
async function freePorts(n: number): Promise<number[]> {
  const servers: net.Server[] = []
  try {
    const ports: number[] = []
    for (let i = 0; i < n; i++) {
      const srv = net.createServer()
      servers.push(srv)
      await new Promise<void>((resolve, reject) => {
        srv.once('error', reject)
        srv.listen(0, '127.0.0.1', () => resolve())
      })
      ports.push((srv.address() as net.AddressInfo).port)
    }
    return ports
  } finally {
    await Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r()))))
  }
}

function run(
  args: string[],
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      'bash',
      [BOOTSTRAP, ...args],
      { env, timeout: timeoutMs, killSignal: 'SIGKILL', maxBuffer: 16 << 20 },
      (err, stdout, stderr) => {
        const code = err == null ? 0 : typeof err.code === 'number' ? err.code : 1
        resolve({ code, stdout: String(stdout), stderr: String(stderr) })
      },
    )
  })
}

async function stopDir(stateDir: string): Promise<void> {
  await run(['stop', stateDir], process.env, 30_000)
  if (!process.env.UPDRAFT_RGW_KEEP) {
    rmSync(stateDir, { recursive: true, force: true })
  }
}

function randomKey(len: number, alphabet: string): string {
  const bytes = randomBytes(len)
  let out = ''
  for (let i = 0; i < len; i++) out += alphabet[bytes[i]! % alphabet.length]
  return out
}

async function startOnce(): Promise<RgwServer> {
  const [rgwPort, monPort] = await freePorts(2)
  const stateDir = mkdtempSync(path.join(os.tmpdir(), 'updraft-rgw-'))
  const accessKeyId = `UPDRAFT${randomKey(13, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789')}`
  const secretAccessKey = randomKey(40, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789')

  const env: NodeJS.ProcessEnv = {
    ...process.env,
    // watchdog: tear the cluster down if this process dies without stop()
    WATCH_PID: String(process.pid),
    WATCH_RMDIR: process.env.UPDRAFT_RGW_KEEP ? '' : '1',
  }
  const res = await run([stateDir, String(rgwPort), accessKeyId, secretAccessKey, String(monPort)], env, 85_000)
  if (res.code !== 0 || !/^READY$/m.test(res.stdout)) {
    await stopDir(stateDir).catch(() => {})
    throw new Error(`starting Ceph RGW failed (exit ${res.code}):\n${res.stdout}\n${res.stderr}`.slice(0, 20_000))
  }
  const roleArn = /^ROLE_ARN=(.+)$/m.exec(res.stdout)?.[1]?.trim() ?? 'arn:aws:iam:::role/updraft-test-role'

  let stopped: Promise<void> | undefined
  return {
    endpoint: `http://127.0.0.1:${rgwPort}`,
    region: 'us-east-1',
    accessKeyId,
    secretAccessKey,
    roleArn,
    stateDir,
    stop() {
      stopped ??= stopDir(stateDir)
      return stopped
    },
  }
}

/**
 * Start a fresh single-node RGW on free loopback ports.
 * Throws with the install command if Ceph is missing, or with the daemon log
 * tails if the cluster does not come up.
 */
export async function startRgw(): Promise<RgwServer> {
  assertRgwInstalled()
  const t0 = Date.now()
  try {
    return await startOnce()
  } catch (first) {
    // The free ports are released before the daemons bind them, so another process
    // may grab one in between: such a failure is quick. Retry once with new ports,
    // but not after a slow failure (a timeout would only repeat).
    if (Date.now() - t0 > 20_000) throw first
    try {
      return await startOnce()
    } catch {
      throw first
    }
  }
}
