// Issue 13, the upload API side of resume, against Ceph RGW: `/list-parts` answers only for a
// multipart ticket it signed (never for a key or upload id the page names), only with `resumable`
// on; token credentials may list parts only with `resumable` on.
import {
  AbortMultipartUploadCommand,
  CreateMultipartUploadCommand,
  ListMultipartUploadsCommand,
  ListPartsCommand,
  S3Client,
} from '@aws-sdk/client-s3'
import { describe, expect, inject, it } from 'vitest'
import { sdkClient } from '../dev/s3-client.ts'
import { uploadPolicy } from '../server/sts.ts'
import { uploadApiFixture } from './helpers/upload-api-fixture.ts'

const rgw = inject('rgw')
const { uploadApiFor } = uploadApiFixture()
const MiB = 1024 * 1024

const post = (url: string, body: unknown) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })

/** Starts a presigned multipart upload through the upload API and sends part 1 with its URL. */
async function startWithOnePart(api: string) {
  const started = (await (
    await post(api, {
      filename: 'r.bin',
      filetype: 'application/octet-stream',
      filesize: 12 * MiB,
      strategy: 'presigned',
    })
  ).json()) as {
    ticket: string
    key: string
    uploadId: string
  }
  const { urls } = (await (await post(`${api}/parts`, { ticket: started.ticket, partNumbers: [1] })).json()) as {
    urls: Record<string, string>
  }
  const put = await fetch(urls['1']!, { method: 'PUT', body: new Uint8Array(5 * MiB) })
  expect(put.status).toBe(200)
  return started
}

describe('/list-parts', () => {
  it('lists what storage holds for the ticket, with sizes; a key or upload id in the body is ignored', async () => {
    const { api } = await uploadApiFor(rgw, { resumable: true })
    const started = await startWithOnePart(api)
    const other = await startWithOnePart(api)
    const reply = await post(`${api}/list-parts`, { ticket: started.ticket, key: other.key, uploadId: other.uploadId })
    expect(reply.status).toBe(200)
    const { parts } = (await reply.json()) as { parts: Array<{ partNumber: number; etag: string; size: number }> }
    expect(parts).toEqual([{ partNumber: 1, etag: expect.stringMatching(/^"[0-9a-f]{32}"$/), size: 5 * MiB }])
    await post(`${api}/abort`, { ticket: started.ticket })
    await post(`${api}/abort`, { ticket: other.ticket })
  })

  it('refuses forged and altered tickets, and token tickets (403)', async () => {
    const { api } = await uploadApiFor(rgw, { resumable: true })
    const started = await startWithOnePart(api)
    const [version, claims, mac] = started.ticket.split('.')
    const altered = JSON.parse(Buffer.from(claims!, 'base64url').toString())
    altered.key = 'next-s3-uploads/someone-else.bin'
    const forged = `${version}.${Buffer.from(JSON.stringify(altered)).toString('base64url')}.${mac}`
    expect((await post(`${api}/list-parts`, { ticket: forged })).status).toBe(403)
    expect((await post(`${api}/list-parts`, { ticket: `tok1.${claims}.${mac}` })).status).toBe(403)
    expect((await post(`${api}/list-parts`, {})).status).toBe(400)
    await post(`${api}/abort`, { ticket: started.ticket })
  })

  it('is off unless the server is resumable (404 saying so)', async () => {
    const { api } = await uploadApiFor(rgw)
    const started = await startWithOnePart(api)
    const reply = await post(`${api}/list-parts`, { ticket: started.ticket })
    expect(reply.status).toBe(404)
    expect(((await reply.json()) as { error: string }).error).toContain('resumable')
    await post(`${api}/abort`, { ticket: started.ticket })
  })

  it('a gone upload is a 404 the engine reads as "start afresh"', async () => {
    const { api } = await uploadApiFor(rgw, { resumable: true })
    const started = await startWithOnePart(api)
    await post(`${api}/abort`, { ticket: started.ticket })
    expect((await post(`${api}/list-parts`, { ticket: started.ticket })).status).toBe(404)
  })
})

describe('token credentials and ListParts', () => {
  it('the policy allows s3:ListMultipartUploadParts only when resumable', () => {
    expect(uploadPolicy('b', 'k')).not.toContain('ListMultipartUploadParts')
    expect(uploadPolicy('b', 'k', true)).toContain('s3:ListMultipartUploadParts')
  })

  it.each([
    [false, 'AccessDenied'],
    [true, undefined],
  ] as const)('on RGW with resumable %s, the issued credentials list parts: %s', async (resumable, refusal) => {
    const { api } = await uploadApiFor(rgw, { resumable, sts: { mode: 'assume-role', roleArn: rgw.roleArn } })
    const reply = (await (
      await post(api, { filename: 't.bin', filetype: 'application/octet-stream', filesize: 12 * MiB })
    ).json()) as {
      token: { Credentials: { AccessKeyId: string; SecretAccessKey: string; SessionToken: string } }
      key: string
    }
    const { AccessKeyId, SecretAccessKey, SessionToken } = reply.token.Credentials
    const client = new S3Client({
      endpoint: rgw.endpoint,
      region: rgw.region,
      forcePathStyle: true,
      credentials: { accessKeyId: AccessKeyId, secretAccessKey: SecretAccessKey, sessionToken: SessionToken },
    })
    const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket: rgw.bucket, Key: reply.key }))
    const listed = client.send(new ListPartsCommand({ Bucket: rgw.bucket, Key: reply.key, UploadId }))
    if (refusal) await expect(listed).rejects.toMatchObject({ name: refusal })
    else {
      expect((await listed).Parts ?? []).toEqual([])
      // Only its own key: another key's upload, and listing the bucket's uploads, stay refused.
      const admin = sdkClient(rgw)
      const other = await admin.send(
        new CreateMultipartUploadCommand({ Bucket: rgw.bucket, Key: `${reply.key}.other` }),
      )
      await expect(
        client.send(new ListPartsCommand({ Bucket: rgw.bucket, Key: `${reply.key}.other`, UploadId: other.UploadId })),
      ).rejects.toMatchObject({
        name: 'AccessDenied',
      })
      await expect(client.send(new ListMultipartUploadsCommand({ Bucket: rgw.bucket }))).rejects.toMatchObject({
        name: 'AccessDenied',
      })
      await admin.send(
        new AbortMultipartUploadCommand({ Bucket: rgw.bucket, Key: `${reply.key}.other`, UploadId: other.UploadId }),
      )
      admin.destroy()
    }
    await client.send(new AbortMultipartUploadCommand({ Bucket: rgw.bucket, Key: reply.key, UploadId }))
    client.destroy()
  })
})
