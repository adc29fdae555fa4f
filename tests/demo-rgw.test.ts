// `npm run demo:rgw` (demo/main-rgw.ts, docs/local-token-mode.md): the demo on a throwaway Ceph RGW with
// STS, where token mode works; without Ceph, one plain line and the install command.
import type { ChildProcess } from 'node:child_process'
import { dirname } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { readObject, sdkClient, sha256, testBytes } from '../dev/s3-client.ts'
import { upload } from '../engine/index.ts'
import { groupAlive, killGroup, spawnGroup } from './helpers/process-group.ts'

const started: ChildProcess[] = []

afterEach(() => {
  for (const child of started.splice(0)) killGroup(child)
})

function run(command: string, args: string[], env: Record<string, string> = {}) {
  const demo = spawnGroup(command, args, { ...process.env, PORT: '0', ...env })
  started.push(demo.child)
  return demo
}

describe('npm run demo:rgw', () => {
  it('starts RGW with STS and the demo in token mode; a token upload through its upload API reads back byte-exact; SIGTERM stops it all', async () => {
    const demo = run('npm', ['run', 'demo:rgw'])
    await expect.poll(demo.output, { timeout: 120_000, interval: 250 }).toContain('Press Ctrl-C to stop.')
    const output = demo.output()
    const url = /Updraft demo on Ceph RGW: (http:\/\/\S+)/.exec(output)![1]!
    const store = /storage +Ceph RGW at (http:\/\/\S+)/.exec(output)![1]!
    const [, key, secret] = /S3_UPLOAD_KEY=(\S+) S3_UPLOAD_SECRET=(\S+)/.exec(output)!

    const info = await fetch(`${url}/api/s3-upload/info`).then((reply) => reply.json())
    expect(info).toMatchObject({ token: true, presigned: true })

    // One token upload as the page sends it: the upload API issues STS credentials, the engine signs with them.
    const bytes = testBytes(300_000, 71)
    const result = await upload(new File([bytes], 'token.bin', { type: 'application/octet-stream' }), {
      api: `${url}/api/s3-upload`,
      strategy: 'token',
    })
    const client = sdkClient({
      endpoint: store,
      region: 'us-east-1',
      credentials: { accessKeyId: key!, secretAccessKey: secret! },
    })
    try {
      expect(sha256(await readObject(client, result.bucket, result.key))).toBe(sha256(bytes))
    } finally {
      client.destroy()
    }

    process.kill(demo.child.pid!, 'SIGTERM')
    await expect.poll(() => groupAlive(demo.child.pid!), { timeout: 30_000, interval: 250 }).toBe(false)
    expect(demo.output()).toContain('Stopped.')
    await expect(fetch(`${store}/`)).rejects.toThrow()
  })

  it('without Ceph on PATH, says so in one line with the install command, and exits 1', async () => {
    // Node alone on PATH: the Ceph programs (in /usr/bin) cannot be found.
    const demo = run(process.execPath, ['--import', 'tsx', 'demo/main-rgw.ts'], { PATH: dirname(process.execPath) })
    expect(await demo.exited).toBe(1)
    expect(demo.output().trim().split('\n')).toEqual([
      'updraft: token mode needs Ceph RGW on this machine, and radosgw, radosgw-admin, ceph-mon, ceph-osd, ceph, monmaptool, ceph-authtool are not installed. On Debian or Ubuntu:',
      '  sudo apt-get install -y --no-install-recommends radosgw ceph-mon ceph-osd',
    ])
  })
})
