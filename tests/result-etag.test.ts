// `result.etag` is the stored object's ETag on every path (issue 33, item 4). RGW's
// CompleteMultipartUpload reply carries an empty <ETag>: a multipart upload the page completes
// itself (token mode with headers of its own, `uploadObject`) learns the ETag elsewhere — from
// /complete's HEAD, or its own HEAD — and the md5 checksum's final ETag check runs on it.
import { HeadObjectCommand } from '@aws-sdk/client-s3'
import { describe, expect, inject, it } from 'vitest'
import { readObject, sha256, testBytes } from '../dev/s3-client.ts'
import { directTarget, type TestStore } from '../dev/stores.ts'
import { fetchTransport, type Transport, upload, uploadObject } from '../engine/index.ts'
import { checksum } from '../engine/opt-ins/checksums/index.ts'
import { uploadApiFixture } from './helpers/upload-api-fixture.ts'

const MiB = 1024 * 1024
const { stores, uploadApiFor, tokenSts, readerFor } = uploadApiFixture()
const swift = (): TestStore => inject('swift')

const file = (bytes: Uint8Array<ArrayBuffer>) => new File([bytes], 'data.bin', { type: 'application/octet-stream' })
const storedETag = async (store: TestStore, key: string) =>
  (await readerFor(store).send(new HeadObjectCommand({ Bucket: store.bucket, Key: key }))).ETag

/** A transport that sees what storage's CompleteMultipartUpload answered, and may rewrite /complete's reply. */
function watching(rewriteComplete?: (reply: Record<string, unknown>) => Record<string, unknown>) {
  const completes: string[] = []
  const transport: Transport = async (request) => {
    const response = await fetchTransport(request)
    if (request.method === 'POST' && /[?&]uploadId=/.test(request.url))
      completes.push(/<ETag>(.*?)<\/ETag>/.exec(response.body)?.[1] ?? '(none)')
    if (rewriteComplete && request.url.endsWith('/complete') && response.status === 200) {
      return { ...response, body: JSON.stringify(rewriteComplete(JSON.parse(response.body))) }
    }
    return response
  }
  return { completes, transport }
}

describe.each(Object.entries(stores))('on %s', (name, store) => {
  it('token mode, a multipart upload the page completes itself (objectHeaders): result.etag is the stored one', async () => {
    const { api, client } = await uploadApiFor(store(), {
      sts: tokenSts(store()),
      allowedObjectExtras: { meta: ['origin'] },
    })
    const bytes = testBytes(11 * MiB, 71)
    const { completes, transport } = watching()
    const result = await upload(file(bytes), {
      api,
      strategy: 'token',
      transport,
      objectHeaders: { 'x-amz-meta-origin': 'camera' },
    })
    expect(sha256(await readObject(client, result.bucket, result.key))).toBe(sha256(bytes))
    expect(completes).toHaveLength(1)
    if (name === 'rgw') expect(completes[0]).toBe('') // why this test exists
    expect(result.etag).toBe(await storedETag(store(), result.key))
  })

  it("with checksum('md5'): storage's own ETag first, else /complete's, and the final ETag check runs on it", async () => {
    const { api } = await uploadApiFor(store(), { sts: tokenSts(store()) })
    const bytes = testBytes(11 * MiB, 72)
    // An API whose /complete names another object's ETag (of the same part count).
    const lie = '"0123456789abcdef0123456789abcdef-3"'
    const { completes, transport } = watching((reply) => ({ ...reply, etag: lie }))
    const told = upload(file(bytes), { api, strategy: 'token', transport, ...checksum('md5') })
    if (name === 'rgw') {
      // Storage's Complete said nothing: the ETag comes from /complete, and the check refuses this one.
      await expect(told).rejects.toMatchObject({
        name: 'UploadError',
        message: expect.stringMatching(
          /^Checksum mismatch: storage reports ETag 0123456789abcdef0123456789abcdef-3 for the object/,
        ),
      })
    } else {
      // Storage's Complete named the ETag: what the API says does not replace it.
      expect(completes[0]).not.toBe('')
      expect((await told).etag).toBe(await storedETag(store(), (await told).key))
    }
    // The truthful API: the check passes on the same path.
    const honest = watching()
    const result = await upload(file(bytes), {
      api,
      strategy: 'token',
      transport: honest.transport,
      ...checksum('md5'),
    })
    expect(sha256(await readObject(readerFor(store()), result.bucket, result.key))).toBe(sha256(bytes))
    expect(result.etag).toBe(await storedETag(store(), result.key))
  })
})

describe.each([...Object.entries(stores), ['swift', swift] as const])('uploadObject on %s', (name, store) => {
  it('multipart: result.etag is the stored object ETag, md5 checked', async () => {
    const key = `etag/${crypto.randomUUID()}.bin`
    const bytes = testBytes(11 * MiB, 73)
    const target = { ...directTarget(store(), key), contentType: 'application/octet-stream', ...checksum('md5') }
    const result = await uploadObject(bytes, target)
    expect(sha256(await readObject(readerFor(store()), store().bucket, key))).toBe(sha256(bytes))
    expect(result.etag).toBe(await storedETag(store(), key))
    if (name !== 'rgw') return
    // RGW's Complete names no ETag: a HEAD does, and the md5 check runs on it (here, a HEAD that lies).
    const lying: Transport = async (request) => {
      const response = await fetchTransport(request)
      if (request.method !== 'HEAD') return response
      return {
        ...response,
        header: (header) =>
          header.toLowerCase() === 'etag' ? '"0123456789abcdef0123456789abcdef-3"' : response.header(header),
      }
    }
    await expect(uploadObject(bytes, { ...target, transport: lying })).rejects.toMatchObject({
      message: expect.stringMatching(/^Checksum mismatch: storage reports ETag 0123456789abcdef0123456789abcdef-3/),
    })
  })
})
