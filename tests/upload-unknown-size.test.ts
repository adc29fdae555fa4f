// upload() of a stream whose length is known only at its end, through the HTTP upload API
// (docs/server.md, "Uploads of unknown length"): the engine reads one part, then asks with
// `sizeUnknown: true` and no `filesize`. Token mode: the engine runs the multipart upload and
// `/complete` checks the stored size against maxFileSize. Presigned mode: always multipart,
// `partCount` absent, each `/parts` call given the part's length in `sizes`.
// Needs the server side of the contract (branch issue14-unknown-size): run once both are merged.
import { HeadObjectCommand, ListMultipartUploadsCommand } from '@aws-sdk/client-s3'
import { describe, expect, inject, it } from 'vitest'
import { readObject, sha256, testBytes } from '../dev/s3-client.ts'
import { ApiError, upload } from '../engine/index.ts'
import { MiB } from '../protocol/limits.ts'
import type { UploadHandlerConfig } from '../server/index.ts'
import { uploadApiFixture } from './helpers/upload-api-fixture.ts'

const rgw = inject('rgw')
const { uploadApiFor, readerFor } = uploadApiFixture()

async function* chunked(data: Uint8Array, size: number) {
  for (let at = 0; at < data.length; at += size) yield data.subarray(at, at + size)
}

const modes: Array<[string, UploadHandlerConfig, 'token' | 'presigned']> = [
  ['presigned', {}, 'presigned'],
  ['token (assume-role)', { sts: { mode: 'assume-role', roleArn: rgw.roleArn, endpoint: rgw.endpoint } }, 'token'],
]
const named = { filename: 'recording.bin', contentType: 'application/octet-stream' }

describe.each(modes)('upload() of a stream of unknown length on RGW, %s', (_mode, config, strategy) => {
  it('11 MiB + 5 B in 64 KiB chunks: asked with sizeUnknown, read back byte-exact, progress ends at the size', async () => {
    const { api, calls, client } = await uploadApiFor(rgw, config)
    const data = testBytes(11 * MiB + 5, 61)
    const progress: Array<{ loaded: number; total: number }> = []
    const result = await upload(chunked(data, 64 * 1024), {
      api,
      strategy,
      ...named,
      onProgress: (p) => void progress.push(p),
    })
    expect(sha256(await readObject(client, result.bucket, result.key))).toBe(sha256(data))
    expect(progress.at(-1)).toEqual({ loaded: data.length, total: data.length })

    const asked = calls[0]!.body
    expect(asked).toMatchObject({ sizeUnknown: true })
    expect(asked).not.toHaveProperty('filesize')
    if (strategy === 'presigned') {
      const reply = calls[0]!.reply as { partCount?: number; partSize: number }
      expect(reply.partCount).toBeUndefined()
      // Every /parts call names each part's length; the last part (5 B) asked with its own.
      const parts = calls
        .filter((call) => call.route === '/parts')
        .map((call) => call.body as { partNumbers: number[]; sizes: Record<string, number> })
      for (const { partNumbers, sizes } of parts)
        expect(Object.keys(sizes).map(Number).sort()).toEqual([...partNumbers].sort())
      expect(parts.some(({ sizes }) => Object.values(sizes).includes(data.length % reply.partSize))).toBe(true)
    }
  })

  it('a stream longer than maxFileSize is refused (413) and nothing stays on storage', async () => {
    const { api, calls } = await uploadApiFor(rgw, { ...config, maxFileSize: 8 * MiB })
    let cleanedUp!: (error?: unknown) => void
    const cleanup = new Promise<unknown>((resolve) => (cleanedUp = resolve))
    const error = await upload(chunked(testBytes(12 * MiB, 62), 256 * 1024), {
      api,
      strategy,
      ...named,
      onCleanup: cleanedUp,
    }).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(ApiError)
    expect(error).toMatchObject({ status: 413 })
    await cleanup
    const { key } = calls[0]!.reply as { key: string }
    const listed = await readerFor(rgw).send(new ListMultipartUploadsCommand({ Bucket: rgw.bucket, Prefix: key }))
    expect(listed.Uploads ?? []).toEqual([])
    await expect(readerFor(rgw).send(new HeadObjectCommand({ Bucket: rgw.bucket, Key: key }))).rejects.toMatchObject({
      name: 'NotFound',
    })
  })
})
