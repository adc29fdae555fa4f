// Issue 24, item 3, on Ceph RGW: the cleanup of a failed or aborted multipart upload is sent only
// once every part request has closed. A part whose body has wholly left when the upload is aborted
// may still be on its way (the proxy here delivers its last 64 KiB 1.5 s late, whether or not the
// page has given up): storage then finishes writing it after an AbortMultipartUpload sent at once,
// and the upload can stay listed. The engine lets such a part get its reply, and aborts after it.
// Both modes; the upload promise itself still rejects at once.
import { ListMultipartUploadsCommand } from '@aws-sdk/client-s3'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { type FaultProxy, startFaultProxy } from '../dev/fault-proxy.ts'
import { sdkClient, testBytes } from '../dev/s3-client.ts'
import { directTarget } from '../dev/stores.ts'
import { upload, uploadObject } from '../engine/index.ts'
import { MIN_PART_SIZE } from '../protocol/limits.ts'
import { uploadApiFixture } from './helpers/upload-api-fixture.ts'

const rgw = inject('rgw')
const reader = sdkClient(rgw)
const LATE_MS = 1500
const { uploadApiFor } = uploadApiFixture()
let proxy: FaultProxy

beforeAll(async () => {
  // Part 1's tail arrives late; everything else at once.
  proxy = await startFaultProxy({
    target: rgw.endpoint,
    kind: 'storage',
    lateTail: ({ step, url }) =>
      step === 'PUT ?partNumber' && new URL(url, 'http://x').searchParams.get('partNumber') === '1'
        ? LATE_MS
        : undefined,
  })
})
afterAll(async () => {
  await proxy?.stop()
  reader.destroy()
})

/** Aborts once part 1's body has wholly left (and part 2 has not started: one part at a time). */
async function abortAfterPartOneLeft(
  start: (options: {
    signal: AbortSignal
    onProgress: (p: { loaded: number }) => void
    onCleanup: (error?: unknown) => void
    partConcurrency: number
  }) => Promise<{ key: string } | unknown>,
) {
  const controller = new AbortController()
  let aborted = false
  let cleanedUp!: (error?: unknown) => void
  const cleanup = new Promise<unknown>((resolve) => (cleanedUp = resolve))
  const result = start({
    signal: controller.signal,
    partConcurrency: 1,
    onProgress: ({ loaded }) => {
      if (loaded >= MIN_PART_SIZE && !aborted) {
        aborted = true
        controller.abort()
      }
    },
    onCleanup: (error) => cleanedUp(error),
  })
  const settled = await Promise.resolve(result).then(
    () => 'resolved',
    (error: Error) => error.name,
  )
  // On the proxy's clock (same process): ordering, not a duration, says the upload did not wait.
  const settledAt = performance.now()
  expect(await cleanup).toBeUndefined()
  return { settled, settledAt }
}

function expectAbortAfterPartOneAnswered(key: string, settledAt: number) {
  const part1 = proxy.log.find(
    (entry) =>
      entry.step === 'PUT ?partNumber' &&
      entry.url.includes(encodeURI(key).replace(/%2F/g, '/')) &&
      entry.url.includes('partNumber=1'),
  )
  const aborts = proxy.log.filter(
    (entry) => entry.step === 'DELETE ?uploadId' && entry.url.includes(key.split('/').at(-1)!),
  )
  expect(part1?.status, 'part 1 reached storage in full, late').toBe(200)
  // The upload rejected before storage answered the lingering part: it did not wait for it.
  expect(settledAt).toBeLessThan(part1!.answeredAt!)
  expect(aborts.length).toBeGreaterThan(0)
  // The cleanup went out only after storage had answered part 1: nothing of the upload landed after it.
  expect(aborts[0]!.receivedAt).toBeGreaterThan(part1!.answeredAt!)
}

describe('cleanup after the last part request has closed (issue 24)', () => {
  it('own credentials: abort with part 1 still arriving → AbortError at once; AbortMultipartUpload after part 1 is answered; 0 uploads listed once onCleanup fires', async () => {
    const key = `cleanup/${crypto.randomUUID()}.bin`
    const { settled, settledAt } = await abortAfterPartOneLeft((options) =>
      uploadObject(new Blob([testBytes(3 * MIN_PART_SIZE, 21)]), {
        ...directTarget({ ...rgw, endpoint: proxy.url }, key),
        ...options,
      }),
    )
    expect(settled).toBe('AbortError')
    expectAbortAfterPartOneAnswered(key, settledAt)
    const { Uploads = [] } = await reader.send(new ListMultipartUploadsCommand({ Bucket: rgw.bucket, Prefix: key }))
    expect(Uploads).toEqual([])
  })

  it('presigned mode: the same, the cleanup through the upload API', async () => {
    const { api } = await uploadApiFor({ ...rgw, endpoint: proxy.url })
    const filename = `cleanup-${crypto.randomUUID()}.bin`
    const { settled, settledAt } = await abortAfterPartOneLeft((options) =>
      upload(new File([testBytes(3 * MIN_PART_SIZE, 22)], filename), { api, strategy: 'presigned', ...options }),
    )
    expect(settled).toBe('AbortError')
    const part1 = proxy.log.find((entry) => entry.step === 'PUT ?partNumber' && entry.url.includes(filename))
    expect(part1?.status).toBe(200)
    // The upload rejected before storage answered the lingering part: it did not wait for it.
    expect(settledAt).toBeLessThan(part1!.answeredAt!)
    const { Uploads = [] } = await reader.send(
      new ListMultipartUploadsCommand({ Bucket: rgw.bucket, Prefix: 'next-s3-uploads/' }),
    )
    expect(Uploads.filter((upload) => upload.Key?.endsWith(filename))).toEqual([])
  })
})
