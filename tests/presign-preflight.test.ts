// Issue 25: what Ceph RGW 16.2 accepts for the browser's CORS preflight (OPTIONS with Origin and
// Access-Control-Request-Method/-Headers) of a presigned PUT URL, by who signed it and how; and
// what a page gets by adding unsigned headers to a URL under the default signer on RGW with an
// STS (the server key, since the session's URLs cannot pass a preflight there).

import { randomUUID } from 'node:crypto'
import {
  CreateBucketCommand,
  GetObjectTaggingCommand,
  HeadObjectCommand,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3'
import { AssumeRoleCommand, STSClient } from '@aws-sdk/client-sts'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { sdkClient } from '../dev/s3-client.ts'
import { storeConfig } from '../dev/stores.ts'
import { objectUrl } from '../protocol/object-url.ts'
import type { PresignedPutReply } from '../protocol/wire.ts'
import { createUploadHandler, type UploadHandler } from '../server/index.ts'
import { sendPreflight } from '../server/preflight-check.ts'
import { createPresigner } from '../server/presigner.ts'
import { presignPolicy } from '../server/sts.ts'

const rgw = inject('rgw')
const ORIGIN = 'https://app.example.test'
const OBJECT_HEADERS = { 'Cache-Control': 'max-age=630720000', 'Content-Type': 'text/plain', 'x-amz-acl': 'private' }
const HEADER_NAMES = Object.keys(OBJECT_HEADERS)
let admin: S3Client
let session: { accessKeyId: string; secretAccessKey: string; sessionToken: string }

beforeAll(async () => {
  admin = sdkClient(rgw)
  const sts = new STSClient({ region: rgw.region, endpoint: rgw.endpoint, credentials: rgw.credentials })
  const { Credentials } = await sts.send(
    new AssumeRoleCommand({
      RoleArn: rgw.roleArn,
      RoleSessionName: 'S3UploadPresigner',
      DurationSeconds: 900,
      Policy: presignPolicy(rgw.bucket, 'next-s3-uploads/'),
    }),
  )
  sts.destroy()
  session = {
    accessKeyId: Credentials!.AccessKeyId!,
    secretAccessKey: Credentials!.SecretAccessKey!,
    sessionToken: Credentials!.SessionToken!,
  }
})
afterAll(() => admin?.destroy())

const objectAt = (key: string) => objectUrl({ ...rgw, bucket: rgw.bucket, key, forcePathStyle: true })
const freshKey = () => `next-s3-uploads/${randomUUID()}/probe.txt`

describe('Ceph RGW 16.2: the preflight of a presigned PUT URL, by signer', () => {
  it("signed by the server's key, headers and all: 200 with Access-Control-Allow-Origin (RGW ignores the signature of an OPTIONS for its own users)", async () => {
    const url = await createPresigner(
      rgw.credentials,
      rgw.region,
    )({
      method: 'PUT',
      url: objectAt(freshKey()),
      headers: { ...OBJECT_HEADERS, 'Content-Length': '5' },
      expiresIn: 600,
    })
    expect(await sendPreflight(url, ORIGIN, HEADER_NAMES)).toEqual({ status: 200, allowOrigin: ORIGIN })
  })

  it('signed by an STS session with the token in the query, as SigV4 presigns: 403 SignatureDoesNotMatch, no Access-Control-Allow-Origin; the same PUT from Node is stored', async () => {
    const key = freshKey()
    const url = await createPresigner(
      session,
      rgw.region,
    )({ method: 'PUT', url: objectAt(key), headers: { ...OBJECT_HEADERS, 'Content-Length': '5' }, expiresIn: 600 })
    expect(new URL(url).searchParams.get('X-Amz-Security-Token')).toBe(session.sessionToken)
    expect(await sendPreflight(url, ORIGIN, HEADER_NAMES)).toEqual({
      status: 403,
      code: 'SignatureDoesNotMatch',
      allowOrigin: null,
    })
    expect((await fetch(url, { method: 'PUT', body: 'hello', headers: OBJECT_HEADERS })).status).toBe(200)
  })

  it('signed by the session, only Content-Length beside host (a part URL): 403 SignatureDoesNotMatch too', async () => {
    const url = await createPresigner(
      session,
      rgw.region,
    )({
      method: 'PUT',
      url: objectAt(freshKey()),
      query: { partNumber: '1', uploadId: 'x' },
      headers: { 'Content-Length': '5242880' },
      expiresIn: 600,
    })
    expect(await sendPreflight(url, ORIGIN, [])).toMatchObject({ status: 403, code: 'SignatureDoesNotMatch' })
  })

  it('signed by the session, host alone: 200 — RGW checks the signature against the headers the preflight carries, so nothing the page must send can be signed', async () => {
    const url = await createPresigner(session, rgw.region)({ method: 'PUT', url: objectAt(freshKey()), expiresIn: 600 })
    expect(await sendPreflight(url, ORIGIN, HEADER_NAMES)).toEqual({ status: 200, allowOrigin: ORIGIN })
  })

  it('the session token as a signed header (X-Amz-Security-Token in SignedHeaders, not in the query): 403 AccessDenied to the preflight and to the PUT carrying it', async () => {
    const key = freshKey()
    const { sessionToken, ...keyOnly } = session
    const url = await createPresigner(
      keyOnly,
      rgw.region,
    )({
      method: 'PUT',
      url: objectAt(key),
      headers: { ...OBJECT_HEADERS, 'Content-Length': '5', 'X-Amz-Security-Token': sessionToken },
      expiresIn: 600,
    })
    expect(await sendPreflight(url, ORIGIN, [...HEADER_NAMES, 'x-amz-security-token'])).toMatchObject({
      status: 403,
      code: 'AccessDenied',
    })
    const put = await fetch(url, {
      method: 'PUT',
      body: 'hello',
      headers: { ...OBJECT_HEADERS, 'X-Amz-Security-Token': sessionToken },
    })
    expect(put.status).toBe(403)
  })
})

describe('Ceph RGW with an STS, presignWith left to its default: what unsigned headers a page adds get', () => {
  const SECRET_BUCKET = `secret-${randomUUID().slice(0, 8)}`
  let handler: UploadHandler
  const warnings: string[] = []
  beforeAll(async () => {
    await admin.send(new CreateBucketCommand({ Bucket: SECRET_BUCKET }))
    await admin.send(new PutObjectCommand({ Bucket: SECRET_BUCKET, Key: 'victim.bin', Body: 'top secret' }))
    handler = createUploadHandler(
      storeConfig(rgw, {
        sts: { mode: 'assume-role', roleArn: rgw.roleArn },
        logger: { error: () => {}, warn: (_obj, msg) => void warnings.push(msg ?? '') },
      }),
    )
  })

  async function presignPut(filesize: number): Promise<PresignedPutReply> {
    const response = await handler(
      new Request('http://app.test/api/s3-upload', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ filename: 'note.txt', filetype: 'text/plain', filesize, strategy: 'presigned' }),
      }),
    )
    expect(response.status).toBe(200)
    return (await response.json()) as PresignedPutReply
  }

  it("signs with the server's key, having seen RGW refuse the session's preflight, and says so once", async () => {
    const [first, second] = await Promise.all([presignPut(1), presignPut(1)])
    for (const reply of [first!, second!]) {
      expect(new URL(reply.url).searchParams.get('X-Amz-Credential')).toMatch(
        new RegExp(`^${rgw.credentials.accessKeyId}/`),
      )
      expect(new URL(reply.url).searchParams.has('X-Amz-Security-Token')).toBe(false)
      expect(await sendPreflight(reply.url, ORIGIN, Object.keys(reply.headers!))).toEqual({
        status: 200,
        allowOrigin: ORIGIN,
      })
    }
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toContain('403 SignatureDoesNotMatch')
  })

  it('x-amz-copy-source on a URL declared for 0 bytes copies nothing, though the server key could read the source: the signed copy guard answers 416 (tests/presigned-copy.test.ts has every copy header)', async () => {
    const reply = await presignPut(0)
    const response = await fetch(reply.url, {
      method: 'PUT',
      headers: { ...reply.headers!, 'x-amz-copy-source': `${SECRET_BUCKET}/victim.bin` },
    })
    expect(response.status).toBe(416)
    await expect(admin.send(new HeadObjectCommand({ Bucket: rgw.bucket, Key: reply.key }))).rejects.toMatchObject({
      name: 'NotFound',
    })
  })

  it('x-amz-meta-* and x-amz-tagging are stored, unsigned (as under the session signer: neither decides access)', async () => {
    const reply = await presignPut(4)
    const response = await fetch(reply.url, {
      method: 'PUT',
      body: 'tags',
      headers: { ...reply.headers!, 'x-amz-meta-owner': 'mallory', 'x-amz-tagging': 'who=mallory' },
    })
    expect(response.status).toBe(200)
    expect((await admin.send(new HeadObjectCommand({ Bucket: rgw.bucket, Key: reply.key }))).Metadata).toEqual({
      owner: 'mallory',
    })
    expect((await admin.send(new GetObjectTaggingCommand({ Bucket: rgw.bucket, Key: reply.key }))).TagSet).toEqual([
      { Key: 'who', Value: 'mallory' },
    ])
  })

  it('what is signed still holds: another Content-Type, or x-amz-acl: public-read, is refused', async () => {
    const reply = await presignPut(5)
    expect(
      (
        await fetch(reply.url, {
          method: 'PUT',
          body: 'hello',
          headers: { ...reply.headers!, 'Content-Type': 'text/html' },
        })
      ).status,
    ).toBe(403)
    expect(
      (
        await fetch(reply.url, {
          method: 'PUT',
          body: 'hello',
          headers: { ...reply.headers!, 'x-amz-acl': 'public-read' },
        })
      ).status,
    ).toBe(403)
    expect(
      (await fetch(reply.url, { method: 'PUT', body: 'hello!', headers: reply.headers! })).status,
    ).toBeGreaterThanOrEqual(400)
    await expect(admin.send(new HeadObjectCommand({ Bucket: rgw.bucket, Key: reply.key }))).rejects.toMatchObject({
      name: 'NotFound',
    })
  })
})
