// Issue 24, item 7: once, in one of four abort runs, every upload after the first (an abort while
// CreateMultipartUpload was held by the proxy for 20 s) sent no request at all and never settled.
// State shared by uploads of one process (Node's connection pool, a shared queue, the upload API's
// presigning session, module-level caches) would do that. Here, in one process: the first upload's
// CreateMultipartUpload is held 20 s at a proxy in front of Ceph RGW and the upload aborted
// meanwhile; the next uploads — while it is still held, and after — must each send their requests,
// settle, and read back byte-exact; the aborted one must leave nothing once its cleanup reports.
import { ListMultipartUploadsCommand, type S3Client } from '@aws-sdk/client-s3'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { type FaultProxy, startFaultProxy } from '../dev/fault-proxy.ts'
import { readObject, sdkClient, sha256, testBytes } from '../dev/s3-client.ts'
import { serveHandler } from '../dev/serve-handler.ts'
import { createQueue, type UploadOptions, upload } from '../engine/index.ts'
import { createUploadHandler } from '../server/index.ts'

const MiB = 1024 * 1024
const HOLD_MS = 20_000
const rgw = inject('rgw')
let admin: S3Client
let proxy: FaultProxy
let api: string
let closeServer: () => Promise<unknown>
/** Whether the next Create (the page's, or the upload API's own) is held. */
let holdNextCreate = false
let createArrived: () => void = () => {}

beforeAll(async () => {
  admin = sdkClient(rgw)
  proxy = await startFaultProxy({
    target: rgw.endpoint,
    kind: 'storage',
    sdk: true,
    hold: ({ step }) => {
      if (step !== 'POST ?uploads' || !holdNextCreate) return undefined
      holdNextCreate = false
      createArrived()
      return HOLD_MS
    },
  })
  const handler = createUploadHandler({
    ...rgw.credentials,
    bucket: rgw.bucket,
    region: rgw.region,
    endpoint: proxy.url,
    forcePathStyle: true,
    sts: { mode: 'assume-role', roleArn: rgw.roleArn, endpoint: rgw.endpoint },
    // The page's own Create (token mode with objectHeaders) carries this.
    allowedObjectExtras: { meta: ['run'] },
    logger: { error: () => {}, warn: () => {} },
  })
  const served = await serveHandler(handler)
  api = `${served.origin}/api/s3-upload`
  closeServer = served.close
})
afterAll(async () => {
  await proxy?.stop()
  await closeServer?.()
  admin?.destroy()
})

const file = (bytes: Uint8Array<ArrayBuffer>) => new File([bytes], 'data.bin', { type: 'application/octet-stream' })
const openUploads = async (key: string) =>
  ((await admin.send(new ListMultipartUploadsCommand({ Bucket: rgw.bucket, Prefix: key }))).Uploads ?? []).filter(
    (u) => u.Key === key,
  ).length

/** Runs `upload` with a bound: a hang fails the test with what the proxy saw of it, rather than the test's timeout. */
async function settles<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const hung = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new Error(
            `${what} never settled within ${ms} ms; the proxy saw: ${proxy.log
              .slice(-8)
              .map((e) => e.step)
              .join(', ')}`,
          ),
        ),
      ms,
    )
  })
  return Promise.race([work, hung]).finally(() => clearTimeout(timer))
}

describe.each<[string, UploadOptions]>([
  // The page creates the upload (objectHeaders keep token mode from asking the upload API to).
  ['token mode, the page’s own Create', { strategy: 'token', objectHeaders: { 'x-amz-meta-run': 'first' } }],
  // The upload API creates it with its SDK (createMultipart): the page's upload request is what waits.
  ['token mode, the upload API’s Create', { strategy: 'token' }],
  ['presigned mode, the upload API’s Create', { strategy: 'presigned' }],
])('%s held 20 s, the upload aborted meanwhile', (_what, firstOptions) => {
  it('every later upload in the process sends its requests and settles, byte-exact, with and without a shared queue; the aborted one leaves nothing', async () => {
    const queue = createQueue(2)
    const arrived = new Promise<void>((resolve) => (createArrived = resolve))
    holdNextCreate = true
    const controller = new AbortController()
    let cleaned!: () => void
    const cleanedUp = new Promise<void>((resolve) => (cleaned = resolve))
    const first = upload(file(testBytes(11 * MiB, 701)), {
      ...firstOptions,
      api,
      queue,
      signal: controller.signal,
      onCleanup: () => cleaned(),
    })
    await settles(arrived, 10_000, 'the first upload’s Create')
    controller.abort()
    await expect(settles(first, 5_000, 'the aborted upload')).rejects.toMatchObject({ name: 'AbortError' })
    // "At once" as an order: the aborted upload settled while storage had not yet answered the
    // Create it was waiting for (held HOLD_MS), not after.
    expect(proxy.log.filter((e) => e.step === 'POST ?uploads').at(-1)!.answeredAt).toBeUndefined()
    // The request that made the first upload names its key: the last upload request the proxy saw a Create for.
    const firstKey = decodeURIComponent(
      new URL(proxy.log.filter((e) => e.step === 'POST ?uploads').at(-1)!.url, 'http://x').pathname,
    )
      .split('/')
      .slice(2)
      .join('/')

    // While that Create is still held: more uploads, of every kind, some sharing the first one's queue.
    const later: Array<[string, Uint8Array<ArrayBuffer>, UploadOptions]> = [
      ['token single', testBytes(70_000, 702), { strategy: 'token' }],
      [
        'token multipart (page Create)',
        testBytes(11 * MiB, 703),
        { strategy: 'token', objectHeaders: { 'x-amz-meta-run': 'later' }, queue },
      ],
      ['presigned single', testBytes(3 * MiB, 704), { strategy: 'presigned', queue }],
      ['presigned multipart', testBytes(11 * MiB, 705), { strategy: 'presigned' }],
    ]
    const before = proxy.log.length
    const results = await settles(
      Promise.all(later.map(([, bytes, options]) => upload(file(bytes), { ...options, api }))),
      HOLD_MS - 2_000,
      'the uploads after the abort',
    )
    expect(proxy.log.length - before).toBeGreaterThanOrEqual(later.length)
    for (const [i, result] of results.entries())
      expect(sha256(await readObject(admin, result.bucket, result.key)), later[i]![0]).toBe(sha256(later[i]![1]))

    // Once the held Create is answered, the first upload's cleanup aborts what it made.
    await settles(cleanedUp, HOLD_MS + 30_000, 'the aborted upload’s cleanup')
    expect(await openUploads(firstKey)).toBe(0)

    // And after all that, one more upload through the same queue.
    const bytes = testBytes(6 * MiB, 706)
    const after = await settles(
      upload(file(bytes), { strategy: firstOptions.strategy, api, queue }),
      20_000,
      'the upload after cleanup',
    )
    expect(sha256(await readObject(admin, after.bucket, after.key))).toBe(sha256(bytes))
  }, 120_000)
})
