// Issue 14, "Directory buckets (S3 Express One Zone)", presigned mode: when the configured bucket
// is a directory bucket, the upload API calls CreateSession with its own credentials and presigns
// with the session (service s3express, X-Amz-S3session-Token in the query). Through the real
// handler served over HTTP and the engine's upload(), in front of the S3 Express stand-in
// (tests/helpers/s3express-server.ts), which checks every URL and forwards to s3rver; every
// object is read back from s3rver.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readObject, sdkClient, sha256, testBytes } from '../dev/s3-client.ts'
import { type S3rverInstance, startS3rver } from '../dev/s3rver.ts'
import { type ServedHandler, serveHandler } from '../dev/serve-handler.ts'
import { ApiError, fetchTransport, type HttpRequest, type Transport, upload } from '../engine/index.ts'
import { MIN_PART_SIZE } from '../protocol/limits.ts'
import type { PresignedPutReply } from '../protocol/wire.ts'
import { createUploadHandler } from '../server/index.ts'
import { type S3ExpressStandIn, startS3ExpressStandIn } from './helpers/s3express-server.ts'

const DIRECTORY_BUCKET = 'presigned--test1-az1--x-s3'
let s3rver: S3rverInstance
let express: S3ExpressStandIn
let served: ServedHandler

beforeAll(async () => {
  s3rver = await startS3rver()
  // The upload API's own key pair is the one the stand-in lets call CreateSession.
  express = await startS3ExpressStandIn({
    store: s3rver,
    buckets: { [DIRECTORY_BUCKET]: s3rver.bucket },
    callers: [s3rver.credentials],
  })
  served = await serveHandler(
    createUploadHandler({
      ...s3rver.credentials,
      bucket: DIRECTORY_BUCKET,
      region: 'us-east-1',
      endpoint: express.endpoint,
      forcePathStyle: true,
      logger: { error: () => {} },
    }),
  )
})
afterAll(async () => {
  await served?.close()
  await express?.stop()
  await s3rver?.stop()
})

const recording =
  (sent: HttpRequest[]): Transport =>
  (request) => (sent.push(request), fetchTransport(request))
const stored = (key: string) => readObject(sdkClient(s3rver), s3rver.bucket, key)

/** A single-PUT reply (these sizes are under the multipart threshold). */
async function askForUrl(filename: string, filesize: number): Promise<PresignedPutReply> {
  const reply = await fetch(served.api, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ filename, filetype: 'application/octet-stream', filesize, strategy: 'presigned' }),
  })
  expect(reply.status).toBe(200)
  return (await reply.json()) as PresignedPutReply
}

describe('presigned upload() to a directory bucket through the upload API', () => {
  it('a single PUT: the URL is signed with a session (s3express, X-Amz-S3session-Token), read back byte-exact', async () => {
    const bytes = testBytes(150_000, 51)
    const sent: HttpRequest[] = []
    const result = await upload(new File([bytes], 'express.bin'), {
      api: served.api,
      strategy: 'presigned',
      transport: recording(sent),
    })
    expect(result.bucket).toBe(DIRECTORY_BUCKET)
    const put = new URL(sent.find((request) => request.method === 'PUT')!.url)
    expect(put.searchParams.get('X-Amz-Credential')).toMatch(
      /^SESSION[0-9A-F]+\/\d{8}\/us-east-1\/s3express\/aws4_request$/,
    )
    expect(put.searchParams.get('X-Amz-S3session-Token')).toMatch(/^stand-in-s3session-/)
    expect(put.searchParams.has('X-Amz-Security-Token')).toBe(false)
    expect(express.sessions.length).toBeGreaterThanOrEqual(1)
    expect(sha256(await stored(result.key))).toBe(sha256(bytes))
  })

  it("multipart: part URLs signed with the session; the server's own multipart calls pass the stand-in too", async () => {
    const bytes = testBytes(2 * MIN_PART_SIZE + 11, 52)
    const sent: HttpRequest[] = []
    const result = await upload(new File([bytes], 'express-multi.bin'), {
      api: served.api,
      strategy: 'presigned',
      partSize: MIN_PART_SIZE,
      transport: recording(sent),
    })
    const parts = sent.filter((request) => request.method === 'PUT').map((request) => new URL(request.url))
    expect(parts).toHaveLength(3)
    for (const part of parts) expect(part.searchParams.get('X-Amz-Credential')).toMatch(/\/s3express\/aws4_request$/)
    expect(
      express.forwarded.filter((line) => line.startsWith(`POST /${DIRECTORY_BUCKET}/`) && /\?uploads(&|$)/.test(line)),
    ).toHaveLength(1)
    expect(sha256(await stored(result.key))).toBe(sha256(bytes))
  })

  it('every URL lasts no longer than its session (AWS sessions: 5 minutes)', async () => {
    const { url } = await askForUrl('short.bin', 10)
    const expires = Number(new URL(url).searchParams.get('X-Amz-Expires'))
    expect(expires).toBeGreaterThan(60)
    expect(expires).toBeLessThanOrEqual(300)
  })

  it('a URL moved to another key, or carrying another body size, is refused by the stand-in and nothing is stored', async () => {
    const reply = await askForUrl('attack.bin', 6)
    const { url, key } = reply
    const moved = url.replace(encodeURIComponent(key).replace(/%2F/g, '/'), 'next-s3-uploads/elsewhere.bin')
    expect(moved).not.toBe(url)
    // The headers signed into the URL, which the PUT must carry.
    const headers = reply.headers ?? {}
    const elsewhere = await fetch(moved, { method: 'PUT', body: 'sixsix', headers })
    expect(elsewhere.status).toBe(403)
    expect(await elsewhere.text()).toContain('<Code>SignatureDoesNotMatch</Code>')
    const longer = await fetch(url, { method: 'PUT', body: 'sixsix and more', headers })
    expect(longer.status).toBe(403)
    await expect(stored('next-s3-uploads/elsewhere.bin')).rejects.toThrow()
    await expect(stored(key)).rejects.toThrow()
    // The genuine request passes: the refusals above were about the changes.
    const genuine = await fetch(url, { method: 'PUT', body: 'sixsix', headers })
    expect(genuine.status).toBe(200)
    expect(new TextDecoder().decode(await stored(key))).toBe('sixsix')
  })

  it("the stand-in, as AWS, refuses a header the URL does not sign (x-amz-copy-source: a copy made with the session's rights)", async () => {
    const victim = await askForUrl('victim.bin', 6)
    expect((await fetch(victim.url, { method: 'PUT', body: 'secret', headers: victim.headers })).status).toBe(200)
    const { url, key, headers } = await askForUrl('copy.bin', 0)
    const copy = await fetch(url, {
      method: 'PUT',
      headers: { ...headers, 'x-amz-copy-source': `${s3rver.bucket}/${victim.key}` },
    })
    expect(copy.status).toBe(403)
    await expect(stored(key)).rejects.toThrow()
  })

  it('token mode is refused: a directory bucket session could write any key in the bucket', async () => {
    const error = await upload(new Blob(['x']), { api: served.api, strategy: 'token' }).catch(
      (caught: unknown) => caught,
    )
    expect(error).toBeInstanceOf(ApiError)
    expect((error as Error).message).toMatch(/directory bucket .* presigned/)
  })
})
