// Issue 14, "Bodies that are not Blobs", the upload API's side (notes: the wire contract): a page
// streaming a body whose length it learns only at its end says `sizeUnknown: true`. The server
// goes multipart at once (presigned: no partCount, URLs bound to the lengths the page declares,
// part numbers capped by maxFileSize), and `/complete` holds the stored size to `maxFileSize`.
// Driven by hand over HTTP against s3rver and Ceph RGW, every object read back byte for byte;
// the attacks run against RGW.

import { createHash } from 'node:crypto'
import { HeadObjectCommand, ListPartsCommand, type S3Client } from '@aws-sdk/client-s3'
import { describe, expect, inject, it } from 'vitest'
import { readObject, sha256, testBytesOf } from '../dev/s3-client.ts'
import type { TestStore } from '../dev/stores.ts'
import { uploadObject } from '../engine/index.ts'
import type {
  CompleteReply,
  ListPartsReply,
  PartsReply,
  PresignedMultipartReply,
  TokenReply,
} from '../protocol/wire.ts'
import type { CompletedUpload, UploadHandlerConfig } from '../server/index.ts'
import { uploadApiFixture } from './helpers/upload-api-fixture.ts'

const MiB = 1024 * 1024
const PART = 5 * MiB
const rgw = inject('rgw')
const { stores, uploadApiFor, tokenSts } = uploadApiFixture()

async function post<T = Record<string, unknown>>(api: string, route: string, body: unknown) {
  const response = await fetch(api + route, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  return { status: response.status, body: (await response.json()) as T & { error?: string } }
}

const put = (url: string, bytes: Uint8Array, headers: Record<string, string> = {}) =>
  fetch(url, { method: 'PUT', body: bytes as Uint8Array<ArrayBuffer>, headers })

const exists = (client: S3Client, bucket: string, key: string) =>
  client.send(new HeadObjectCommand({ Bucket: bucket, Key: key })).then(
    () => true,
    (error: { $metadata?: { httpStatusCode?: number } }) =>
      error.$metadata?.httpStatusCode === 404 ? false : Promise.reject(error),
  )

/** The token reply's credentials, used as a page holding them would: a multipart upload of `bytes` (uploadObject). */
function withToken({ token: { Credentials }, ...reply }: TokenReply, bytes: Uint8Array<ArrayBuffer>) {
  return uploadObject(new Blob([bytes]), {
    ...reply,
    forcePathStyle: true,
    contentType: 'image/png',
    credentials: {
      accessKeyId: Credentials.AccessKeyId,
      secretAccessKey: Credentials.SecretAccessKey,
      sessionToken: Credentials.SessionToken,
    },
  })
}

const md5 = (bytes: Uint8Array) => createHash('md5').update(bytes).digest('base64')

/** An upload API for `store` whose onUploadComplete records what it was told. */
async function unknownSizeApi(store: TestStore, extra: UploadHandlerConfig = {}) {
  const completed: Array<Omit<CompletedUpload, 'request'>> = []
  const served = await uploadApiFor(store, {
    onUploadComplete: ({ request: _, ...upload }) => {
      completed.push(upload)
      return { size: upload.size }
    },
    ...extra,
  })
  return { ...served, completed }
}

/** POSTs the upload request of a stream: `sizeUnknown`, no filesize. */
async function startUnknown<T = PresignedMultipartReply>(api: string, strategy: 'presigned' | 'token' = 'presigned') {
  const started = await post<T>(api, '', { filename: 'clip.png', filetype: 'image/png', sizeUnknown: true, strategy })
  expect(started.status, started.body.error).toBe(200)
  return started.body
}

/**
 * Sends `bytes` as a stream's parts would go: whole parts of the reply's partSize through the
 * reply's URLs where it has them, the rest (and the short last part) through /parts with `sizes`.
 */
async function sendParts(api: string, reply: PresignedMultipartReply, bytes: Uint8Array) {
  const parts: Array<{ partNumber: number; etag: string }> = []
  for (let start = 0, partNumber = 1; start < bytes.length; start += reply.partSize, partNumber++) {
    const part = bytes.subarray(start, start + reply.partSize)
    let url = part.length === reply.partSize ? reply.urls?.[partNumber] : undefined
    if (!url) {
      const asked = await post<PartsReply>(api, '/parts', {
        ticket: reply.ticket,
        partNumbers: [partNumber],
        sizes: { [partNumber]: part.length },
      })
      expect(asked.status, asked.body.error).toBe(200)
      url = asked.body.urls[partNumber]!
    }
    const sent = await put(url, part)
    expect(sent.status, await sent.clone().text()).toBe(200)
    parts.push({ partNumber, etag: sent.headers.get('etag')! })
  }
  return parts
}

describe.each(Object.entries(stores))('on %s', (_name, store) => {
  it('presigned: multipart at once, no partCount, whole-part URLs; sent by hand and completed, it reads back byte-exact', async () => {
    const { api, client, completed } = await unknownSizeApi(store(), { maxFileSize: 20 * MiB })
    const reply = await startUnknown(api)
    expect(reply).not.toHaveProperty('partCount')
    expect(reply.partSize).toBe(PART)
    // URLs for the first parts, but none past the cap: 20 MiB is 4 parts.
    expect(Object.keys(reply.urls!)).toEqual(['1', '2', '3', '4'])
    expect(new URL(reply.urls!['1']!).searchParams.get('X-Amz-SignedHeaders')).toBe('content-length;host')

    const bytes = testBytesOf('image/png', 2 * PART + 123_457, 14)
    const parts = await sendParts(api, reply, bytes)
    const done = await post<CompleteReply>(api, '/complete', { ticket: reply.ticket, parts })
    expect(done.status, done.body.error).toBe(200)
    expect(done.body).toMatchObject({ key: reply.key, bucket: reply.bucket, serverData: { size: bytes.length } })
    expect(sha256(await readObject(client, reply.bucket, reply.key))).toBe(sha256(bytes))
    expect(completed).toEqual([
      expect.objectContaining({
        key: reply.key,
        size: bytes.length,
        contentType: 'image/png',
        uploadId: reply.uploadId,
      }),
    ])
  })

  it('token: the usual reply; /complete takes the stored size within maxFileSize, and onUploadComplete sees it', async () => {
    const { api, client, completed } = await unknownSizeApi(store(), { maxFileSize: 20 * MiB, sts: tokenSts(store()) })
    const reply = await startUnknown<TokenReply>(api, 'token')
    expect(reply.token.Credentials.AccessKeyId).toEqual(expect.any(String))
    const bytes = testBytesOf('image/png', PART + 77_777, 15)
    await withToken(reply, bytes)
    const done = await post<CompleteReply>(api, '/complete', { ticket: reply.ticket })
    expect(done.status, done.body.error).toBe(200)
    expect(done.body.serverData).toEqual({ size: bytes.length })
    expect(sha256(await readObject(client, reply.bucket, reply.key))).toBe(sha256(bytes))
    expect(completed.map((upload) => upload.size)).toEqual([bytes.length])
  })
})

describe('the part size of an upload of unknown length (Ceph RGW)', () => {
  it('without maxFileSize: the configured partSize, URLs for the first 8 parts', async () => {
    const { api } = await unknownSizeApi(rgw)
    const reply = await startUnknown(api)
    expect(reply.partSize).toBe(PART)
    expect(Object.keys(reply.urls!)).toEqual(['1', '2', '3', '4', '5', '6', '7', '8'])
    expect((await post(api, '/abort', { ticket: reply.ticket })).status).toBe(200)
  })

  it('raised so that a file of maxFileSize fits in 10 000 parts; part numbers stop where it is reached', async () => {
    const { api } = await unknownSizeApi(rgw, { maxFileSize: 100 * 1024 * MiB })
    const reply = await startUnknown(api)
    // 100 GiB / 10 000 parts is 10.24 MiB: the next whole MiB.
    expect(reply.partSize).toBe(11 * MiB)
    expect((await post(api, '/parts', { ticket: reply.ticket, partNumbers: [9310], sizes: { 9310: 1 } })).status).toBe(
      200,
    )
    expect((await post(api, '/parts', { ticket: reply.ticket, partNumbers: [9311], sizes: { 9311: 1 } })).status).toBe(
      413,
    )
    expect((await post(api, '/abort', { ticket: reply.ticket })).status).toBe(200)
  })
})

describe('attacks on an upload of unknown length (Ceph RGW)', () => {
  it('a URL is bound to the length asked for, never over partSize: more bytes are refused by storage', async () => {
    const { api, client } = await unknownSizeApi(rgw, { maxFileSize: 20 * MiB })
    const reply = await startUnknown(api)
    const bytes = testBytesOf('image/png', PART + 1, 16)
    // The reply's whole-part URL takes exactly partSize bytes.
    expect((await put(reply.urls!['1']!, bytes)).status).toBe(403)
    // A URL for fewer bytes takes no more.
    const short = await post<PartsReply>(api, '/parts', { ticket: reply.ticket, partNumbers: [2], sizes: { 2: 1000 } })
    expect(short.status).toBe(200)
    expect((await put(short.body.urls['2']!, bytes.subarray(0, 1001))).status).toBe(403)
    // No URL for a part over partSize, or empty.
    for (const size of [PART + 1, 0]) {
      const refused = await post(api, '/parts', { ticket: reply.ticket, partNumbers: [3], sizes: { 3: size } })
      expect(refused).toEqual({
        status: 400,
        body: { error: `sizes[3] must be from 1 to the part size of ${PART} bytes, got ${size}` },
      })
    }
    const stored = await client.send(
      new ListPartsCommand({ Bucket: reply.bucket, Key: reply.key, UploadId: reply.uploadId }),
    )
    expect(stored.Parts ?? []).toEqual([])
    await post(api, '/abort', { ticket: reply.ticket })
  })

  it('sizes must name every part asked, and only those; none at all is a 400', async () => {
    const { api } = await unknownSizeApi(rgw, { maxFileSize: 20 * MiB })
    const reply = await startUnknown(api)
    expect(await post(api, '/parts', { ticket: reply.ticket, partNumbers: [2, 3], sizes: { 2: PART } })).toEqual({
      status: 400,
      body: { error: 'sizes must give the length of every part asked for: part 3 has none' },
    })
    expect(
      (await post(api, '/parts', { ticket: reply.ticket, partNumbers: [2], sizes: { 2: PART, 3: PART } })).status,
    ).toBe(400)
    expect(await post(api, '/parts', { ticket: reply.ticket, partNumbers: [2] })).toEqual({
      status: 400,
      body: {
        error: 'sizes is required for an upload of unknown length: give each part asked for its length in bytes',
      },
    })
    await post(api, '/abort', { ticket: reply.ticket })
  })

  it('a part number over min(10000, ceil(maxFileSize / partSize)) is refused by the upload API (413), in /parts and /complete', async () => {
    const { api, client, completed } = await unknownSizeApi(rgw, { maxFileSize: 12 * MiB })
    const reply = await startUnknown(api)
    expect(Object.keys(reply.urls!)).toEqual(['1', '2', '3'])
    const over = await post(api, '/parts', { ticket: reply.ticket, partNumbers: [3, 4], sizes: { 3: PART, 4: 1 } })
    expect(over).toEqual({
      status: 413,
      body: {
        error: `part number 4 is over the limit: this upload API accepts files of at most ${12 * MiB} bytes, which is 3 parts of ${PART} bytes`,
      },
    })
    const parts = await sendParts(api, reply, testBytesOf('image/png', PART + 10, 17))
    const done = await post(api, '/complete', {
      ticket: reply.ticket,
      parts: [...parts, { partNumber: 4, etag: parts[0]!.etag }],
    })
    expect(done.status).toBe(413)
    expect(completed).toEqual([])
    expect(await exists(client, reply.bucket, reply.key)).toBe(false)
    await post(api, '/abort', { ticket: reply.ticket })
  })

  it('an upload past maxFileSize completes at storage, then /complete deletes it and answers 413', async () => {
    const { api, client, completed } = await unknownSizeApi(rgw, { maxFileSize: 12 * MiB })
    const reply = await startUnknown(api)
    // Three whole parts fit the cap of 3 parts, and hold 15 MiB.
    const bytes = testBytesOf('image/png', 3 * PART, 18)
    const parts = await sendParts(api, reply, bytes)
    expect(await post(api, '/complete', { ticket: reply.ticket, parts })).toEqual({
      status: 413,
      body: {
        error: `The uploaded object was refused and deleted: it holds ${3 * PART} bytes: 15 MiB is over the 12 MiB limit`,
      },
    })
    expect(await exists(client, reply.bucket, reply.key)).toBe(false)
    expect(completed).toEqual([])
  })

  it('token mode: past maxFileSize, deleted at /complete (413)', async () => {
    const { api, client, completed } = await unknownSizeApi(rgw, { maxFileSize: 6 * MiB, sts: tokenSts(rgw) })
    const reply = await startUnknown<TokenReply>(api, 'token')
    await withToken(reply, testBytesOf('image/png', PART + 2 * MiB, 19))
    expect(await exists(client, reply.bucket, reply.key)).toBe(true)
    expect(await post(api, '/complete', { ticket: reply.ticket })).toEqual({
      status: 413,
      body: {
        error: `The uploaded object was refused and deleted: it holds ${PART + 2 * MiB} bytes: 7 MiB is over the 6 MiB limit`,
      },
    })
    expect(await exists(client, reply.bucket, reply.key)).toBe(false)
    expect(completed).toEqual([])
  })

  it('a ticket altered to flip the flag fails the MAC: known → unknown, and unknown → known', async () => {
    const { api } = await unknownSizeApi(rgw, { maxFileSize: 12 * MiB })
    const alter = (ticket: string, change: (claims: Record<string, unknown>) => Record<string, unknown>) => {
      const [prefix, body, signature] = ticket.split('.')
      const claims = JSON.parse(Buffer.from(body!, 'base64url').toString()) as Record<string, unknown>
      return `${prefix}.${Buffer.from(JSON.stringify(change(claims))).toString('base64url')}.${signature}`
    }
    const known = await post<PresignedMultipartReply>(api, '', {
      filename: 'a.png',
      filetype: 'image/png',
      filesize: 6 * MiB,
      strategy: 'presigned',
    })
    expect(known.status).toBe(200)
    const flagged = alter(known.body.ticket, ({ filesize: _f, partCount: _p, ...rest }) => ({
      ...rest,
      sizeUnknown: true,
    }))
    expect(await post(api, '/parts', { ticket: flagged, partNumbers: [2], sizes: { 2: PART } })).toEqual({
      status: 403,
      body: { error: 'The upload ticket is not valid' },
    })
    // The genuine known-size ticket takes no sizes: its plan fixes each length.
    expect(await post(api, '/parts', { ticket: known.body.ticket, partNumbers: [2], sizes: { 2: PART } })).toEqual({
      status: 400,
      body: {
        error:
          'sizes is only for uploads of unknown length: this upload declared its filesize, which fixes every part’s length',
      },
    })
    const unknown = await startUnknown(api)
    const declared = alter(unknown.ticket, ({ sizeUnknown: _s, ...rest }) => ({
      ...rest,
      filesize: 100 * MiB,
      partCount: 20,
    }))
    expect((await post(api, '/parts', { ticket: declared, partNumbers: [20] })).status).toBe(403)
    expect((await post(api, '/complete', { ticket: declared, parts: [{ partNumber: 1, etag: '"x"' }] })).status).toBe(
      403,
    )
    // A token ticket of unknown size cannot be made to declare one, either.
    const { api: tokenApi } = await unknownSizeApi(rgw, { maxFileSize: 12 * MiB, sts: tokenSts(rgw) })
    const token = await startUnknown<TokenReply>(tokenApi, 'token')
    const sized = alter(token.ticket!, ({ sizeUnknown: _s, ...rest }) => ({ ...rest, filesize: 1 }))
    expect((await post(tokenApi, '/complete', { ticket: sized })).status).toBe(403)
    await post(api, '/abort', { ticket: known.body.ticket })
    await post(api, '/abort', { ticket: unknown.ticket })
  })

  it('sizeUnknown with filesize is a 400, and nothing is created', async () => {
    const { api, calls } = await unknownSizeApi(rgw, { maxFileSize: 12 * MiB })
    expect(
      await post(api, '', {
        filename: 'a.png',
        filetype: 'image/png',
        filesize: 10,
        sizeUnknown: true,
        strategy: 'presigned',
      }),
    ).toEqual({
      status: 400,
      body: { error: 'Send either filesize (the length is known) or sizeUnknown: true (it is not), not both' },
    })
    expect(calls.map((call) => call.status)).toEqual([400])
  })

  it('contentMd5 alongside sizes: storage takes the part only with the bytes hashed (BadDigest otherwise), then completes byte-exact', async () => {
    const { api, client } = await unknownSizeApi(rgw, { maxFileSize: 20 * MiB })
    const reply = await startUnknown(api)
    const bytes = testBytesOf('image/png', PART + 4321, 20)
    const [first, last] = [bytes.subarray(0, PART), bytes.subarray(PART)]
    const asked = await post<PartsReply>(api, '/parts', {
      ticket: reply.ticket,
      partNumbers: [1, 2],
      sizes: { 1: PART, 2: last.length },
      contentMd5: { 1: md5(first), 2: md5(last) },
    })
    expect(asked.status, asked.body.error).toBe(200)
    expect(new URL(asked.body.urls['2']!).searchParams.get('X-Amz-SignedHeaders')).toBe(
      'content-length;content-md5;host',
    )
    const damaged = last.slice()
    damaged[100]! ^= 1
    const refused = await put(asked.body.urls['2']!, damaged, { 'content-md5': md5(last) })
    expect(refused.status).toBe(400)
    expect(await refused.text()).toContain('BadDigest')
    const parts = []
    for (const [partNumber, part] of [
      [1, first],
      [2, last],
    ] as const) {
      const sent = await put(asked.body.urls[partNumber]!, part, { 'content-md5': md5(part) })
      expect(sent.status).toBe(200)
      parts.push({ partNumber, etag: sent.headers.get('etag')! })
    }
    expect((await post(api, '/complete', { ticket: reply.ticket, parts })).status).toBe(200)
    expect(sha256(await readObject(client, reply.bucket, reply.key))).toBe(sha256(bytes))
  })

  it('/list-parts answers for an unknown-size ticket as for any other (the engine never resumes a stream)', async () => {
    const { api } = await unknownSizeApi(rgw, { maxFileSize: 20 * MiB, resumable: true })
    const reply = await startUnknown(api)
    await sendParts(api, reply, testBytesOf('image/png', PART, 21))
    const listed = await post<ListPartsReply>(api, '/list-parts', { ticket: reply.ticket })
    expect(listed).toEqual({
      status: 200,
      body: { parts: [{ partNumber: 1, etag: expect.stringMatching(/^"[0-9a-f]{32}"$/), size: PART }] },
    })
    await post(api, '/abort', { ticket: reply.ticket })
  })
})
