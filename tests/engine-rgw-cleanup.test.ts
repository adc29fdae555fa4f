import { ListMultipartUploadsCommand } from '@aws-sdk/client-s3'
import { describe, expect, inject, it } from 'vitest'
import { readObject, sdkClient, sha256, testBytes } from '../dev/s3-client.ts'
import { directTarget } from '../dev/stores.ts'
import type { TransferOptions } from '../engine/core/options.ts'
import { S3Error, uploadObject } from '../engine/index.ts'
import { MIN_PART_SIZE, MiB } from '../protocol/limits.ts'

// s3rver has no AbortMultipartUpload or ListMultipartUploads: cleanup is checked on Ceph RGW.
const rgw = inject('rgw')
const client = sdkClient(rgw)
const body = new Blob([testBytes(6 * MIN_PART_SIZE, 3)])

const uploadsLeftFor = async (key: string) => {
  const listed = await client.send(new ListMultipartUploadsCommand({ Bucket: rgw.bucket, Prefix: key }))
  return (listed.Uploads ?? []).filter((upload) => upload.Key === key)
}

/** Starts a 6-part upload and aborts it once the first part is on storage. */
async function uploadAndAbortMidway(key: string, options: TransferOptions = {}) {
  const controller = new AbortController()
  // The rejection comes at once; AbortMultipartUpload runs in the background, and onCleanup says when it is over.
  let cleanedUp!: () => void
  const cleanup = new Promise<void>((resolve) => (cleanedUp = resolve))
  const upload = uploadObject(body, {
    ...directTarget(rgw, key),
    partConcurrency: 2,
    signal: controller.signal,
    onProgress: ({ loaded }) => {
      if (loaded >= MIN_PART_SIZE) controller.abort()
    },
    onCleanup: () => cleanedUp(),
    ...options,
  })
  const error = await upload.catch((error: unknown) => error)
  await cleanup
  return error
}

describe('cleanup on Ceph RGW', () => {
  it('aborting midway rejects with AbortError and leaves no multipart upload behind', async () => {
    const key = `abort/${crypto.randomUUID()}.bin`
    const error = await uploadAndAbortMidway(key)
    expect(error).toMatchObject({ name: 'AbortError', message: 'Upload aborted' })
    expect(await uploadsLeftFor(key)).toEqual([])
  })

  it('with leavePartsOnError the aborted upload is still listed, parts and all', async () => {
    const key = `abort-keep/${crypto.randomUUID()}.bin`
    const error = await uploadAndAbortMidway(key, { leavePartsOnError: true })
    expect(error).toMatchObject({ name: 'AbortError' })
    expect(await uploadsLeftFor(key)).toHaveLength(1)
  })

  it('a wrong secret fails with a typed error carrying the server code and request id, and nothing is written', async () => {
    const key = `denied/${crypto.randomUUID()}.bin`
    const error = await uploadObject(new Blob(['hello']), {
      ...directTarget(rgw, key),
      credentials: { ...rgw.credentials, secretAccessKey: 'not-the-secret' },
    }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(S3Error)
    // RGW answers AccessDenied where AWS says SignatureDoesNotMatch.
    expect(error).toMatchObject({ code: 'AccessDenied', status: 403 })
    expect((error as S3Error).requestId).toBeTruthy()
    expect((error as Error).message).not.toContain('not-the-secret')
    await expect(readObject(client, rgw.bucket, key)).rejects.toMatchObject({ name: 'NoSuchKey' })
  })

  it('parts under 5 MiB cannot be sent: the engine refuses before storage sees a request', async () => {
    const key = `small-parts/${crypto.randomUUID()}.bin`
    await expect(
      uploadObject(new Blob([testBytes(3 * MiB)]), { ...directTarget(rgw, key), partSize: MiB }),
    ).rejects.toThrow('updraft: partSize must be a whole number from 5 MiB to 5 GiB, got 1048576')
    expect(await uploadsLeftFor(key)).toEqual([])
  })

  it('a multipart upload completes on RGW, reads back byte-exact and leaves no upload open', async () => {
    const key = `complete/${crypto.randomUUID()}.bin`
    const result = await uploadObject(body, {
      ...directTarget(rgw, key),
    })
    expect(result.url).toBe(`${rgw.endpoint}/${rgw.bucket}/${key}`)
    expect(sha256(await readObject(client, rgw.bucket, key))).toBe(sha256(new Uint8Array(await body.arrayBuffer())))
    expect(await uploadsLeftFor(key)).toEqual([])
  })
})
