// A caller's callback that throws is the caller's bug. Before, a throwing onProgress was caught by
// the node:http transport's send loop, taken for a network failure and retried until the upload
// failed with a NetworkError, and a throwing onCleanup left a rejection nobody handled. Now the
// upload goes on untouched and the error surfaces as uncaught, where the platform reports it.
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { readObject, sdkClient, sha256 } from '../dev/s3-client.ts'
import { type S3rverInstance, startS3rver } from '../dev/s3rver.ts'
import { directTarget } from '../dev/stores.ts'
import { MIN_PART_SIZE } from '../protocol/limits.ts'

let s3rver: S3rverInstance
beforeAll(async () => {
  s3rver = await startS3rver()
})
afterAll(() => s3rver?.stop())

it.each([
  ['a single PUT', 1000],
  ['a multipart upload', 2 * MIN_PART_SIZE + 7],
])(
  '%s whose onProgress and onCleanup throw completes, unretried, and the errors surface as uncaught',
  async (_, size) => {
    const target = directTarget(s3rver, `callbacks/${size}-${crypto.randomUUID()}.bin`)
    const { stdout } = await promisify(execFile)(
      join(process.cwd(), 'node_modules/.bin/tsx'),
      ['tests/fixtures/throwing-callbacks.ts'],
      {
        env: { ...process.env, TARGET: JSON.stringify(target), SIZE: String(size) },
      },
    )
    const report = JSON.parse(stdout.trim().split('\n').pop()!)
    expect(report).toEqual({
      outcome: { key: target.key },
      retries: 0,
      cleanups: 1,
      uncaught: ['bug in onProgress', 'bug in onCleanup'],
    })
    const expected = new Uint8Array(size).map((_, i) => i % 251)
    expect(sha256(await readObject(sdkClient(s3rver), s3rver.bucket, target.key))).toBe(sha256(expected))
  },
  60_000,
)
