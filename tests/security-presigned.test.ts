// Issue 10, finding 1: presigned URLs carried headers the server never signed. RGW and s3rver
// apply unsigned x-amz-* headers on a presigned request, so a URL signed with the server's own key
// plus `x-amz-copy-source` became a server-side copy made with the server's rights (a secret object
// from another bucket, 12 MiB into a URL declared for 0 bytes), and `x-amz-acl: public-read` made
// the object public. Now, where the store has STS, URLs are signed by a session credential that
// may only upload under the key prefix, and the headers that decide how an object is served
// (Content-Type, Cache-Control, a canned ACL) are signed, so a page cannot change them.

import { randomUUID } from 'node:crypto'
import {
  CreateBucketCommand,
  GetObjectAclCommand,
  HeadObjectCommand,
  ListPartsCommand,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { objectExists, readObject, sdkClient, sha256, testBytes, testBytesOf } from '../dev/s3-client.ts'
import { S3RVER_CREDENTIALS, type S3rverInstance, startS3rver } from '../dev/s3rver.ts'
import { storeConfig, type TestStore } from '../dev/stores.ts'
import { type StsStandIn, startStsServer } from '../dev/sts-server.ts'
import { objectUrl } from '../protocol/object-url.ts'
import type { PartsReply, PresignedMultipartReply, PresignedPutReply } from '../protocol/wire.ts'
import { createUploadHandler, type UploadHandler, type UploadHandlerConfig } from '../server/index.ts'
import { presignPolicy } from '../server/sts.ts'

const MiB = 1024 * 1024
const rgw = inject('rgw')
const SECRET_BUCKET = `secret-${randomUUID().slice(0, 8)}`
const secretBytes = testBytes(12 * MiB, 101)
let admin: S3Client

beforeAll(async () => {
  admin = sdkClient(rgw)
  // A bucket the page was never meant to see, holding an object bigger than anything declared.
  await admin.send(new CreateBucketCommand({ Bucket: SECRET_BUCKET }))
  await admin.send(new PutObjectCommand({ Bucket: SECRET_BUCKET, Key: 'victim.bin', Body: secretBytes }))
})
afterAll(() => admin?.destroy())

const post = (handler: UploadHandler, path: string, body: unknown) =>
  handler(
    new Request(`http://app.test/api/s3-upload${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }),
  )

async function ask<T>(handler: UploadHandler, path: string, body: unknown): Promise<T> {
  const response = await post(handler, path, body)
  expect(response.status, await response.clone().text()).toBe(200)
  return (await response.json()) as T
}

const put = (url: string, body: Uint8Array, headers: Record<string, string>) =>
  fetch(url, { method: 'PUT', body: body as Uint8Array<ArrayBuffer>, headers })

const anonymousStatus = async (store: TestStore, bucket: string, key: string) =>
  (await fetch(objectUrl({ ...store, bucket, key, forcePathStyle: true }))).status

describe("on Ceph RGW, URLs signed by a session credential (assume-role, presignWith: 'session')", () => {
  const logged: object[] = []
  let handler: UploadHandler
  beforeAll(() => {
    handler = createUploadHandler(
      // 'session' named: left to its default on RGW, the server key signs (RGW refuses a browser's
      // preflight for session-signed URLs: tests/presign-preflight.test.ts). From Node, the session's work.
      storeConfig(rgw, {
        sts: { mode: 'assume-role', roleArn: rgw.roleArn },
        presignWith: 'session',
        logger: { error: (obj) => void logged.push(obj) },
      }),
    )
  })

  const presignPut = (filesize: number, filetype = 'text/plain') =>
    ask<PresignedPutReply>(handler, '', { filename: 'note.txt', filetype, filesize, strategy: 'presigned' })

  it('signs with a session credential, not the server key', async () => {
    const reply = await presignPut(5)
    const query = new URL(reply.url).searchParams
    expect(query.get('X-Amz-Credential')).not.toContain(rgw.credentials.accessKeyId)
    expect(query.get('X-Amz-Security-Token')).toBeTruthy()
    expect(query.get('X-Amz-SignedHeaders')).toBe(
      'cache-control;content-length;content-type;host;x-amz-acl;x-amz-copy-source-range',
    )
    expect((await put(reply.url, new TextEncoder().encode('hello'), reply.headers!)).status).toBe(200)
    expect(new TextDecoder().decode(await readObject(admin, rgw.bucket, reply.key))).toBe('hello')
  })

  it('a URL declared for 0 bytes plus x-amz-copy-source copies nothing (was: 12 MiB of a secret bucket copied in)', async () => {
    const reply = await presignPut(0)
    const response = await put(reply.url, new Uint8Array(), {
      ...reply.headers!,
      'x-amz-copy-source': `${SECRET_BUCKET}/victim.bin`,
    })
    // The signed copy guard answers first (416 InvalidRange); without it the session may read nothing (403).
    expect(response.status).toBe(416)
    expect(await objectExists(admin, rgw.bucket, reply.key)).toBe(false)
    const unguarded = createUploadHandler(
      storeConfig(rgw, {
        sts: { mode: 'assume-role', roleArn: rgw.roleArn },
        presignWith: 'session',
        copyGuard: false,
        logger: { error: () => {} },
      }),
    )
    const bare = await ask<PresignedPutReply>(unguarded, '', {
      filename: 'note.txt',
      filetype: 'text/plain',
      filesize: 0,
      strategy: 'presigned',
    })
    const refused = await put(bare.url, new Uint8Array(), {
      ...bare.headers!,
      'x-amz-copy-source': `${SECRET_BUCKET}/victim.bin`,
    })
    expect(refused.status).toBe(403)
    expect(await refused.text()).toContain('AccessDenied')
    expect(await objectExists(admin, rgw.bucket, bare.key)).toBe(false)
  })

  it('a part URL plus x-amz-copy-source (UploadPartCopy) is refused, and no part is stored', async () => {
    const started = await ask<PresignedMultipartReply>(handler, '', {
      filename: 'big.bin',
      filetype: 'application/octet-stream',
      filesize: 6 * MiB,
      strategy: 'presigned',
    })
    const { urls } = await ask<PartsReply>(handler, '/parts', { ticket: started.ticket, partNumbers: [1] })
    const response = await put(urls['1']!, testBytes(5 * MiB, 102), {
      'x-amz-copy-source': `${SECRET_BUCKET}/victim.bin`,
    })
    expect(response.status).toBe(403)
    const listed = await admin.send(
      new ListPartsCommand({ Bucket: rgw.bucket, Key: started.key, UploadId: started.uploadId }),
    )
    expect(listed.Parts ?? []).toEqual([])
    await ask(handler, '/abort', { ticket: started.ticket })
  })

  it('x-amz-acl: public-read in place of the signed ACL is refused; a grant beside it too; the object stays private', async () => {
    const bytes = new TextEncoder().encode('private')
    const reply = await presignPut(bytes.length)
    expect(reply.headers).toMatchObject({ 'x-amz-acl': 'private' })
    expect((await put(reply.url, bytes, { ...reply.headers!, 'x-amz-acl': 'public-read' })).status).toBe(403)
    const grant = await put(reply.url, bytes, {
      ...reply.headers!,
      'x-amz-grant-read': 'uri="http://acs.amazonaws.com/groups/global/AllUsers"',
    })
    expect(grant.status).toBe(400)
    expect(await objectExists(admin, rgw.bucket, reply.key)).toBe(false)
    expect((await put(reply.url, bytes, reply.headers!)).status).toBe(200)
    expect(await anonymousStatus(rgw, rgw.bucket, reply.key)).toBe(403)
  })

  it('a Content-Type other than the signed one is refused', async () => {
    const reply = await presignPut(5, 'image/png')
    expect((await put(reply.url, testBytes(5), { ...reply.headers!, 'Content-Type': 'text/html' })).status).toBe(403)
    expect(await objectExists(admin, rgw.bucket, reply.key)).toBe(false)
  })

  it('any set of hostile headers added to a URL: never a copy, never public, never another type (fast-check)', async () => {
    const hostile: Record<string, string> = {
      'x-amz-copy-source': `${SECRET_BUCKET}/victim.bin`,
      'x-amz-acl': 'public-read',
      'x-amz-grant-read': 'uri="http://acs.amazonaws.com/groups/global/AllUsers"',
      'x-amz-grant-full-control': 'uri="http://acs.amazonaws.com/groups/global/AllUsers"',
      'x-amz-meta-owner': 'mallory',
      'x-amz-tagging': 'who=mallory',
      'x-amz-website-redirect-location': 'https://evil.example/',
      'x-amz-storage-class': 'STANDARD',
      'x-amz-metadata-directive': 'REPLACE',
      'Content-Type': 'text/html',
      'Content-Disposition': 'inline',
      'Content-Encoding': 'gzip',
      'Cache-Control': 'public, max-age=1',
      Expires: 'Thu, 01 Jan 2099 00:00:00 GMT',
    }
    await fc.assert(
      fc.asyncProperty(fc.subarray(Object.keys(hostile), { minLength: 1 }), async (names) => {
        const bytes = testBytes(1000, names.length)
        const reply = await presignPut(bytes.length, 'image/png')
        const headers = { ...reply.headers! }
        for (const name of names) headers[name] = hostile[name]!
        const response = await put(reply.url, bytes, headers)
        if (!(await objectExists(admin, rgw.bucket, reply.key))) {
          expect(response.status).toBeGreaterThanOrEqual(400)
          return
        }
        // Stored: then exactly the page's bytes, as signed, and private.
        expect(sha256(await readObject(admin, rgw.bucket, reply.key))).toBe(sha256(bytes))
        const head = await admin.send(new HeadObjectCommand({ Bucket: rgw.bucket, Key: reply.key }))
        expect([head.ContentType, head.CacheControl]).toEqual(['image/png', 'max-age=630720000'])
        expect(await anonymousStatus(rgw, rgw.bucket, reply.key)).toBe(403)
        const acl = await admin.send(new GetObjectAclCommand({ Bucket: rgw.bucket, Key: reply.key }))
        expect((acl.Grants ?? []).filter((grant) => grant.Grantee?.URI)).toEqual([])
      }),
      { numRuns: 20 },
    )
  })

  it("multipart: the ETag the upload API reports is the object's", async () => {
    const bytes = testBytesOf('video/mp4', 11 * MiB, 103)
    const started = await ask<PresignedMultipartReply>(handler, '', {
      filename: 'm.bin',
      filetype: 'video/mp4',
      filesize: bytes.length,
      strategy: 'presigned',
    })
    const partNumbers = [1, 2, 3]
    const { urls } = await ask<PartsReply>(handler, '/parts', { ticket: started.ticket, partNumbers })
    const parts = await Promise.all(
      partNumbers.map(async (partNumber) => {
        const response = await put(
          urls[partNumber]!,
          bytes.subarray((partNumber - 1) * started.partSize, partNumber * started.partSize),
          {},
        )
        expect(response.status).toBe(200)
        return { partNumber, etag: response.headers.get('etag')! }
      }),
    )
    const done = await ask<{ etag: string }>(handler, '/complete', { ticket: started.ticket, parts })
    const head = await admin.send(new HeadObjectCommand({ Bucket: rgw.bucket, Key: started.key }))
    expect(done.etag).toBe(head.ETag)
    expect(head.ContentType).toBe('video/mp4')
    expect(sha256(await readObject(admin, rgw.bucket, started.key))).toBe(sha256(bytes))
    expect(await anonymousStatus(rgw, rgw.bucket, started.key)).toBe(403)
  })

  it('a key callback outside keyPrefix is a server error (logged), not a URL storage would refuse', async () => {
    const outside = createUploadHandler(
      storeConfig(rgw, {
        sts: { mode: 'assume-role', roleArn: rgw.roleArn },
        presignWith: 'session',
        key: () => 'elsewhere/file.txt',
        logger: { error: (obj) => void logged.push(obj) },
      }),
    )
    const response = await post(outside, '', {
      filename: 'a.txt',
      filetype: 'text/plain',
      filesize: 1,
      strategy: 'presigned',
    })
    expect(response.status).toBe(500)
    expect(JSON.stringify(logged.pop())).toContain("outside keyPrefix 'next-s3-uploads/'")
  })
})

describe('on s3rver, which has no STS: the server key signs, and says so', () => {
  let s3rver: S3rverInstance
  let sts: StsStandIn
  beforeAll(async () => {
    s3rver = await startS3rver()
    sts = await startStsServer({ caller: S3RVER_CREDENTIALS, issue: S3RVER_CREDENTIALS })
  })
  afterAll(async () => {
    await sts?.stop()
    await s3rver?.stop()
  })

  it('warns when the handler is created, naming the least privilege the key needs; on the local store (s3rver, its one key), that this is expected', () => {
    const warnings: string[] = []
    const logger = { error: () => {}, warn: (_obj: object, msg?: string) => void warnings.push(msg ?? '') }
    // The same settings on a store that is not this machine's s3rver: the key's rights matter there.
    createUploadHandler(storeConfig(s3rver, { endpoint: 'https://minio.example.test', logger }))
    createUploadHandler(storeConfig(s3rver, { logger }))
    expect(warnings).toEqual([
      expect.stringMatching(
        /signed with the server's own key \(GetFederationToken exists only on AWS STS.*only s3:PutObject, s3:AbortMultipartUpload, s3:GetObject, s3:DeleteObject on uploads\/next-s3-uploads\/\*; s3:ListBucketMultipartUploads on uploads /,
      ),
      `updraft: the local store at ${s3rver.endpoint} (s3rver): presigned uploads signed with its one key, token mode off — expected for the local store, which has no STS or IAM`,
    ])
  })

  it('a URL for a file without a type still signs one, so a page cannot store text/html in its place', async () => {
    const handler = createUploadHandler(storeConfig(s3rver, { logger: { error: () => {}, warn: () => {} } }))
    const html = new TextEncoder().encode('<script>document.title="pwned"</script>')
    const reply = await ask<PresignedPutReply>(handler, '', {
      filename: 'x',
      filetype: '',
      filesize: html.length,
      strategy: 'presigned',
    })
    expect(reply.headers).toMatchObject({ 'Content-Type': 'application/octet-stream', 'x-amz-acl': 'private' })
    expect((await put(reply.url, html, { ...reply.headers!, 'Content-Type': 'text/html' })).status).toBe(403)
    expect(
      (await put(reply.url, html, { 'Content-Type': 'text/html', 'Cache-Control': 'max-age=630720000' })).status,
    ).toBe(403)
    expect((await put(reply.url, html, reply.headers!)).status).toBe(200)
    const client = sdkClient(s3rver)
    const head = await client.send(new HeadObjectCommand({ Bucket: s3rver.bucket, Key: reply.key }))
    expect(head.ContentType).toBe('application/octet-stream')
    client.destroy()
  })

  it('with an STS (here the stand-in), one session credential signs many URLs, its policy the upload prefix only', async () => {
    const config: UploadHandlerConfig = storeConfig(s3rver, { sts: { mode: 'federation', endpoint: sts.endpoint } })
    const handler = createUploadHandler(config)
    const before = sts.calls.length
    const replies = await Promise.all(
      [1, 2, 3, 4].map(() =>
        ask<PresignedPutReply>(handler, '', {
          filename: 'a.bin',
          filetype: 'application/octet-stream',
          filesize: 3,
          strategy: 'presigned',
        }),
      ),
    )
    expect(sts.calls.slice(before)).toEqual([
      expect.objectContaining({
        Action: 'GetFederationToken',
        Name: 'S3UploadPresigner',
        DurationSeconds: '3600',
        // Written out by hand, so the test does not grade the code with itself.
        Policy:
          '{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["s3:PutObject","s3:AbortMultipartUpload"],"Resource":["arn:aws:s3:::uploads/next-s3-uploads/*"]}]}',
      }),
    ])
    expect(presignPolicy('uploads', 'next-s3-uploads/')).toBe(sts.calls.at(-1)!.Policy)
    for (const reply of replies) {
      expect(new URL(reply.url).searchParams.get('X-Amz-Security-Token')).toMatch(/^stand-in-session-/)
      // s3rver checks the signature (made with the stand-in's S3RVER pair) and ignores the token.
      expect((await put(reply.url, testBytes(3), reply.headers!)).status).toBe(200)
    }
  })
})
