// No copy through a presigned URL, on any store, in the default configuration. RGW, s3rver and
// other stores apply an `x-amz-copy-source` header a page adds to a presigned upload URL: a
// server-side copy made with the signer's rights (measured on the `npm start` app against RGW:
// another upload copied into the page's key, 12 MiB stored through a URL issued for 0 bytes).
// Each store, as the upload API is set up for it by default, gets every copy header on a single PUT
// URL, a 0-byte URL and a part URL; the object (or part) holds only what the page sent, or
// nothing. Token credentials, which sign their own requests, are tried too. Measured on RGW
// 16.2.15 (server/copy-guard.ts): RGW ignores `x-amz-copy-source-if-match`, its ranged copy
// through PutObject honours no precondition and works only through a 0-byte URL, and a part copy
// fails its length check for every part URL (each binds at least one byte).
// ~15 s (11-20 s measured on the shared 2 cores): one victim object per store, about 50 storage requests each.
import {
  CreateMultipartUploadCommand,
  HeadObjectCommand,
  ListPartsCommand,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3'
import { AwsClient } from 'aws4fetch'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { type EmbeddedS3, startEmbeddedS3 } from '../cli/embedded-s3.ts'
import { readObject, sdkClient, sha256, testBytes } from '../dev/s3-client.ts'
import { storeConfig, type TestStore } from '../dev/stores.ts'
import { objectUrl } from '../protocol/object-url.ts'
import type { PartsReply, PresignedMultipartReply, PresignedPutReply, TokenReply } from '../protocol/wire.ts'
import { createUploadHandler, type UploadHandler, type UploadHandlerConfig } from '../server/index.ts'

const MiB = 1024 * 1024
const rgw = inject('rgw')
const swift = inject('swift')
let embedded: EmbeddedS3

beforeAll(async () => {
  embedded = await startEmbeddedS3()
})
afterAll(() => embedded?.close())

const quiet = { logger: { error: () => {}, warn: () => {} } }

/** Each store as its deployment runs it by default (the demo's embedded s3rver is `npm start`'s store). */
const STORES: Array<[label: string, store: () => TestStore, extra: () => UploadHandlerConfig]> = [
  ['Ceph RGW without an STS (the server key signs)', () => rgw, () => ({})],
  [
    'Ceph RGW with an STS (presignWith left to its default: the server key signs)',
    () => rgw,
    () => ({ sts: { mode: 'assume-role', roleArn: rgw.roleArn } }),
  ],
  [
    "Ceph RGW with an STS and presignWith: 'session'",
    () => rgw,
    () => ({ sts: { mode: 'assume-role', roleArn: rgw.roleArn }, presignWith: 'session' }),
  ],
  ['OpenStack Swift (the server key signs)', () => swift, () => ({})],
  [
    "the demo's embedded s3rver (the server key signs)",
    () => ({ ...embedded, name: 's3rver', bucketWithoutExposedETag: embedded.bucket }),
    () => ({}),
  ],
]

const post = async <T>(handler: UploadHandler, path: string, body: unknown): Promise<T> => {
  const response = await handler(
    new Request(`http://app.test/api/s3-upload${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }),
  )
  expect(response.status, await response.clone().text()).toBe(200)
  return (await response.json()) as T
}

const put = (url: string, body: Uint8Array, headers: Record<string, string>) =>
  fetch(url, { method: 'PUT', body: body as Uint8Array<ArrayBuffer>, headers })

async function stored(admin: S3Client, bucket: string, key: string): Promise<Uint8Array | undefined> {
  try {
    return await readObject(admin, bucket, key)
  } catch (error) {
    if ((error as { name?: string }).name === 'NoSuchKey') return undefined
    throw error
  }
}

/** What a page adds to a URL to make it a copy of `source` (`bucket/key`), for a URL that binds `length` bytes. */
const copyHeaders = (source: string, length: number, victimSize: number): Array<[string, Record<string, string>]> => [
  ['x-amz-copy-source', { 'x-amz-copy-source': source }],
  ['x-amz-copy-source with a leading slash, URL-encoded', { 'x-amz-copy-source': `/${encodeURIComponent(source)}` }],
  [
    'x-amz-copy-source + x-amz-metadata-directive: REPLACE',
    { 'x-amz-copy-source': source, 'x-amz-metadata-directive': 'REPLACE' },
  ],
  [
    'x-amz-copy-source + -range of the bound length',
    { 'x-amz-copy-source': source, 'x-amz-copy-source-range': `bytes=0-${Math.max(length, 1) - 1}` },
  ],
  [
    'x-amz-copy-source + -range of the whole victim',
    { 'x-amz-copy-source': source, 'x-amz-copy-source-range': `bytes=0-${victimSize - 1}` },
  ],
  [
    'x-amz-copy-source + a matching x-amz-copy-source-if-match',
    { 'x-amz-copy-source': source, 'x-amz-copy-source-if-match': '*' },
  ],
]

describe.each(STORES)('on %s', (_label, storeOf, extraOf) => {
  let store: TestStore
  let admin: S3Client
  let handler: UploadHandler
  const victimKey = `next-s3-uploads/${crypto.randomUUID()}/someone-elses.bin`
  const victim = testBytes(MiB + 3, 331)
  let source: string

  beforeAll(async () => {
    store = storeOf()
    admin = sdkClient(store)
    // Another user's upload, under the prefix the server key may read (/complete HEADs objects there).
    await admin.send(new PutObjectCommand({ Bucket: store.bucket, Key: victimKey, Body: victim }))
    source = `${store.bucket}/${victimKey}`
    handler = createUploadHandler(storeConfig(store, { ...quiet, ...extraOf() }))
  })
  afterAll(() => admin?.destroy())

  it.each([
    ['a 5-byte PUT URL', 5],
    ['a 0-byte PUT URL', 0],
  ])('%s plus any copy header stores no copy; then the page’s own bytes land byte-exact', async (_what, size) => {
    const mine = testBytes(size, 7)
    const reply = await post<PresignedPutReply>(handler, '', {
      filename: 'mine.bin',
      filetype: 'application/octet-stream',
      filesize: size,
      strategy: 'presigned',
    })
    const signed = reply.headers!
    for (const [what, added] of [
      ...copyHeaders(source, size, victim.length),
      [
        'a second x-amz-copy-source-range',
        { 'x-amz-copy-source': source, 'x-amz-copy-source-range': 'bytes=0-4' },
      ] as const,
    ]) {
      const response = await put(reply.url, mine, { ...signed, ...added })
      const now = await stored(admin, store.bucket, reply.key)
      // Refused, or (a store that ignores the header) the page's bytes: never the victim's.
      if (now !== undefined) expect(sha256(now), `${what}: answered ${response.status}`).toBe(sha256(mine))
      else expect(response.status, what).toBeGreaterThanOrEqual(400)
    }
    expect((await put(reply.url, mine, signed)).status).toBe(200)
    expect(sha256((await stored(admin, store.bucket, reply.key))!)).toBe(sha256(mine))
  })

  it('a part URL plus any copy header stores no part; the upload then completes with the page’s bytes only', async () => {
    const mine = testBytes(6 * MiB + 1, 8)
    const started = await post<PresignedMultipartReply>(handler, '', {
      filename: 'big.bin',
      filetype: 'application/octet-stream',
      filesize: mine.length,
      strategy: 'presigned',
    })
    const { urls } = await post<PartsReply>(handler, '/parts', { ticket: started.ticket, partNumbers: [1, 2] })
    const bodies = [mine.subarray(0, started.partSize), mine.subarray(started.partSize)]
    for (const [n, body] of bodies.entries()) {
      for (const [what, added] of copyHeaders(source, body.length, victim.length)) {
        const response = await put(urls[n + 1]!, body, added)
        const listed = await admin.send(
          new ListPartsCommand({ Bucket: store.bucket, Key: started.key, UploadId: started.uploadId }),
        )
        expect(listed.Parts ?? [], `part ${n + 1}, ${what}: answered ${response.status}`).toEqual([])
      }
    }
    const parts = await Promise.all(
      bodies.map(async (body, n) => {
        const response = await put(urls[n + 1]!, body, {})
        expect(response.status).toBe(200)
        return { partNumber: n + 1, etag: response.headers.get('etag')! }
      }),
    )
    await post(handler, '/complete', { ticket: started.ticket, parts })
    expect(sha256((await stored(admin, store.bucket, started.key))!)).toBe(sha256(mine))
  })
})

describe('token credentials on Ceph RGW sign their own copy headers: refused all the same', () => {
  it('CopyObject, a ranged copy and UploadPartCopy into the issued key answer 403 and store nothing', async () => {
    const admin = sdkClient(rgw)
    const victimKey = `next-s3-uploads/${crypto.randomUUID()}/someone-elses.bin`
    await admin.send(new PutObjectCommand({ Bucket: rgw.bucket, Key: victimKey, Body: testBytes(1000, 9) }))
    const handler = createUploadHandler(
      storeConfig(rgw, { ...quiet, sts: { mode: 'assume-role', roleArn: rgw.roleArn } }),
    )
    const reply = await post<TokenReply>(handler, '', {
      filename: 'mine.bin',
      filetype: 'application/octet-stream',
      filesize: 5,
      strategy: 'token',
    })
    const { AccessKeyId, SecretAccessKey, SessionToken } = reply.token.Credentials
    const page = new AwsClient({
      accessKeyId: AccessKeyId,
      secretAccessKey: SecretAccessKey,
      sessionToken: SessionToken,
      service: 's3',
      region: rgw.region,
    })
    const url = objectUrl({ ...rgw, bucket: rgw.bucket, key: reply.key, forcePathStyle: true })
    const source = `${rgw.bucket}/${victimKey}`
    const attempts: Array<Record<string, string>> = [
      { 'x-amz-copy-source': source },
      { 'x-amz-copy-source': source, 'x-amz-copy-source-range': 'bytes=0-4' },
    ]
    for (const headers of attempts) {
      expect((await page.fetch(url, { method: 'PUT', headers, body: '' })).status).toBe(403)
    }
    await expect(admin.send(new HeadObjectCommand({ Bucket: rgw.bucket, Key: reply.key }))).rejects.toMatchObject({
      name: 'NotFound',
    })
    const { UploadId } = await admin.send(new CreateMultipartUploadCommand({ Bucket: rgw.bucket, Key: reply.key }))
    const partUrl = `${url}?partNumber=1&uploadId=${encodeURIComponent(UploadId!)}`
    expect(
      (await page.fetch(partUrl, { method: 'PUT', headers: { 'x-amz-copy-source': source }, body: '' })).status,
    ).toBe(403)
    expect(
      (await admin.send(new ListPartsCommand({ Bucket: rgw.bucket, Key: reply.key, UploadId }))).Parts ?? [],
    ).toEqual([])
    admin.destroy()
  })
})
