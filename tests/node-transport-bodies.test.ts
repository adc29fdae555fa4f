// Node's default transport (node:http) with each kind of body it is handed whole: a Buffer, an
// in-memory Blob, a file-backed Blob (fs.openAsBlob), uploaded to s3rver and Ceph RGW and read back
// byte-exact. Progress must stay what the stall watchdog relies on: monotonic, ending at the size,
// and moving at least every MiB sent (issue 28 writes bodies in corked windows of 1 MiB).
import { openAsBlob } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readObject, sha256, testBytes } from '../dev/s3-client.ts'
import { directTarget } from '../dev/stores.ts'
import { type Progress, uploadObject } from '../engine/index.ts'
import { nodeTransport } from '../engine/transport/node-transport.ts'
import { MiB } from '../protocol/limits.ts'
import { uploadApiFixture } from './helpers/upload-api-fixture.ts'

const { stores, readerFor } = uploadApiFixture()
const PART = 5 * MiB
/** 3 parts, the last one short; not a multiple of 64 KiB (a file-backed Blob's read size). */
const SIZE = 2 * PART + 3 * MiB + 12_345
const data = testBytes(SIZE, 28)

let folder: string
let file: string
beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'updraft-node-bodies-'))
  file = join(folder, 'body.bin')
  await writeFile(file, data)
})
afterAll(() => rm(folder, { recursive: true, force: true }))

const bodies: Array<[string, () => Promise<Blob | Uint8Array>]> = [
  ['a Buffer', async () => Buffer.from(data)],
  // One buffer: Node streams each slice of it as a single chunk (a whole part).
  ['an in-memory Blob of one buffer', async () => new Blob([data])],
  [
    'an in-memory Blob of 64 KiB pieces',
    async () =>
      new Blob(Array.from({ length: Math.ceil(SIZE / 65536) }, (_, i) => data.subarray(i * 65536, (i + 1) * 65536))),
  ],
  ['a file-backed Blob (fs.openAsBlob)', () => openAsBlob(file)],
]

describe.each(Object.entries(stores))('node:http uploads each body kind byte-exact, on %s', (name, store) => {
  it.each(bodies)(
    '%s: read back byte-exact; progress monotonic, in steps of at most 1 MiB, ending at the size',
    async (label, make) => {
      const key = `node-bodies/${name}/${label.replace(/\W+/g, '-')}-${crypto.randomUUID()}.bin`
      const seen: Progress[] = []
      await uploadObject(
        await make(),
        directTarget(store(), key, {
          partSize: PART,
          transport: nodeTransport,
          onProgress: (progress: Progress) => seen.push(progress),
        }),
      )

      const stored = await readObject(readerFor(store()), store().bucket, key)
      expect(stored.length).toBe(SIZE)
      expect(sha256(stored)).toBe(sha256(data))
      const loaded = seen.map((progress) => progress.loaded)
      expect(loaded.at(-1)).toBe(SIZE)
      expect(seen.every((progress) => progress.total === SIZE)).toBe(true)
      const steps = loaded.slice(1).map((bytes, i) => bytes - loaded[i]!)
      expect(Math.min(...steps)).toBeGreaterThan(0)
      // A part written as one piece would show up as one 5 MiB step, with nothing for the watchdog meanwhile.
      expect(Math.max(...steps)).toBeLessThanOrEqual(MiB)
    },
  )
})
