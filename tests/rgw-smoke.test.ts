// Smoke test of the throwaway Ceph RGW (dev/rgw.ts): the S3/STS
// features the rest of the suite relies on.

import {
  AbortMultipartUploadCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  ListMultipartUploadsCommand,
  PutBucketCorsCommand,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3'
import { AssumeRoleCommand, STSClient } from '@aws-sdk/client-sts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type RgwServer, startRgw } from '../dev/rgw.ts'

const BUCKET = 'smoke-bucket'

let rgw: RgwServer
let s3: S3Client

function s3Client(credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string }): S3Client {
  return new S3Client({
    endpoint: rgw.endpoint,
    region: rgw.region,
    credentials,
    forcePathStyle: true,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  })
}

beforeAll(async () => {
  rgw = await startRgw()
  s3 = s3Client({
    accessKeyId: rgw.accessKeyId,
    secretAccessKey: rgw.secretAccessKey,
  })
  await s3.send(new CreateBucketCommand({ Bucket: BUCKET }))
}, 90_000)

afterAll(async () => {
  s3?.destroy()
  await rgw?.stop()
}, 30_000)

describe('Ceph RGW smoke', () => {
  it('serves a CORS preflight after PutBucketCors', async () => {
    await s3.send(
      new PutBucketCorsCommand({
        Bucket: BUCKET,
        CORSConfiguration: {
          CORSRules: [
            {
              AllowedOrigins: ['*'],
              AllowedMethods: ['GET', 'PUT', 'POST', 'DELETE', 'HEAD'],
              AllowedHeaders: ['*'],
              ExposeHeaders: ['ETag'],
            },
          ],
        },
      }),
    )
    const res = await fetch(`${rgw.endpoint}/${BUCKET}/some/key.bin`, {
      method: 'OPTIONS',
      headers: {
        Origin: 'http://localhost:5173',
        'Access-Control-Request-Method': 'PUT',
        'Access-Control-Request-Headers': 'content-type,x-amz-date',
      },
    })
    expect(res.status).toBe(200)
    const allowOrigin = res.headers.get('access-control-allow-origin')
    expect(['*', 'http://localhost:5173']).toContain(allowOrigin)
    expect(res.headers.get('access-control-allow-methods') ?? '').toContain('PUT')
    expect((res.headers.get('access-control-allow-headers') ?? '').toLowerCase()).toContain('content-type')
    expect((res.headers.get('access-control-expose-headers') ?? '').toLowerCase()).toContain('etag')
  })

  it('round-trips object bytes with PutObject/GetObject', async () => {
    const body = new Uint8Array(256 * 1024)
    for (let i = 0; i < body.length; i++) body[i] = (i * 31 + 7) & 0xff
    const put = await s3.send(
      new PutObjectCommand({
        Bucket: BUCKET,
        Key: 'roundtrip.bin',
        Body: body,
        ContentType: 'application/octet-stream',
      }),
    )
    expect(put.ETag).toMatch(/^"[0-9a-f]{32}"$/)
    const got = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'roundtrip.bin' }))
    const bytes = await got.Body!.transformToByteArray()
    expect(bytes.length).toBe(body.length)
    expect(Buffer.compare(Buffer.from(bytes), Buffer.from(body))).toBe(0)
  })

  it('lists and aborts a multipart upload', async () => {
    const key = 'multipart/abort-me.bin'
    const created = await s3.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: key }))
    const uploadId = created.UploadId!
    expect(uploadId).toBeTruthy()

    const listed = await s3.send(new ListMultipartUploadsCommand({ Bucket: BUCKET }))
    expect((listed.Uploads ?? []).some((u) => u.Key === key && u.UploadId === uploadId)).toBe(true)

    await s3.send(
      new AbortMultipartUploadCommand({
        Bucket: BUCKET,
        Key: key,
        UploadId: uploadId,
      }),
    )
    const after = await s3.send(new ListMultipartUploadsCommand({ Bucket: BUCKET }))
    expect((after.Uploads ?? []).some((u) => u.UploadId === uploadId)).toBe(false)
  })

  it('STS AssumeRole with a session policy scopes credentials to one key', async () => {
    const key = 'sts/allowed.txt'
    const sts = new STSClient({
      endpoint: rgw.endpoint,
      region: rgw.region,
      credentials: {
        accessKeyId: rgw.accessKeyId,
        secretAccessKey: rgw.secretAccessKey,
      },
    })
    const policy = JSON.stringify({
      Version: '2012-10-17',
      Statement: [
        {
          Effect: 'Allow',
          Action: ['s3:PutObject', 's3:AbortMultipartUpload'],
          Resource: [`arn:aws:s3:::${BUCKET}/${key}`],
        },
      ],
    })
    const assumed = await sts.send(
      new AssumeRoleCommand({
        RoleArn: rgw.roleArn,
        RoleSessionName: 'test-session',
        DurationSeconds: 900,
        Policy: policy,
      }),
    )
    sts.destroy()
    const c = assumed.Credentials!
    expect(c.AccessKeyId).toBeTruthy()
    expect(c.SecretAccessKey).toBeTruthy()
    expect(c.SessionToken).toBeTruthy()

    const scoped = s3Client({
      accessKeyId: c.AccessKeyId!,
      secretAccessKey: c.SecretAccessKey!,
      sessionToken: c.SessionToken!,
    })
    try {
      const ok = await scoped.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: 'allowed' }))
      expect(ok.ETag).toBeTruthy()

      let denied: unknown
      try {
        await scoped.send(
          new PutObjectCommand({
            Bucket: BUCKET,
            Key: 'sts/other.txt',
            Body: 'nope',
          }),
        )
      } catch (e) {
        denied = e
      }
      expect(denied).toBeInstanceOf(S3ServiceException)
      const err = denied as S3ServiceException
      expect(err.name).toBe('AccessDenied')
      expect(err.$metadata.httpStatusCode).toBe(403)
    } finally {
      scoped.destroy()
    }

    // the object written with the scoped credentials is really there
    const got = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }))
    expect(await got.Body!.transformToString()).toBe('allowed')
  })
})
