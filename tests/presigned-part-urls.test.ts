// Presigned multipart part URLs, end to end over HTTP: the first come with the upload API's reply,
// the rest in batches asked for ahead of need (never all at once, and never making a part wait on
// /parts), and a URL that storage refuses as expired is asked for again.
import { describe, expect, it } from 'vitest'
import { readObject, sha256, testBytes } from '../dev/s3-client.ts'
import { fetchTransport, type Transport, upload } from '../engine/index.ts'
import { checksum } from '../engine/opt-ins/checksums/index.ts'
import type { PresignedMultipartReply } from '../protocol/wire.ts'
import { xmlText } from '../protocol/xml.ts'
import { createUploadHandler } from '../server/index.ts'
import { uploadApiFixture } from './helpers/upload-api-fixture.ts'

const MiB = 1024 * 1024
/** Part URLs live this long here, so one can be made to expire in a test's time. */
const PART_URL_SECONDS = 3
/** Longer than PART_URL_SECONDS plus the up-to-1 s that X-Amz-Date's truncation to seconds takes off. */
const HOLD_MS = (PART_URL_SECONDS + 1.5) * 1000

const { stores, uploadApiFor, s3rver } = uploadApiFixture()

interface Sent {
  partNumber: number
  status: number
  code: string | undefined
  message: string | undefined
}

/** fetch, recording each part PUT's answer; `hold` delays chosen attempts before they are sent. */
function recordingTransport(hold: (partNumber: number, attempt: number) => number = () => 0) {
  const sent: Sent[] = []
  const attempts = new Map<number, number>()
  const transport: Transport = async (request) => {
    const partNumber = Number(new URL(request.url).searchParams.get('partNumber'))
    const attempt = (attempts.get(partNumber) ?? 0) + 1
    attempts.set(partNumber, attempt)
    const ms = hold(partNumber, attempt)
    if (ms > 0) await new Promise((resolve) => setTimeout(resolve, ms))
    const response = await fetchTransport(request)
    sent.push({
      partNumber,
      status: response.status,
      code: xmlText(response.body, 'Code'),
      message: xmlText(response.body, 'Message'),
    })
    return response
  }
  return { transport, sent }
}

describe.each(Object.entries(stores))('a part URL that expired before use, on %s', (name, store) => {
  it('is refused by storage, re-asked from /parts, and the upload completes byte-exact', async () => {
    const { api, calls, client } = await uploadApiFor(store(), { partUrlExpiresIn: PART_URL_SECONDS })
    // Part 2's first PUT waits past its URL's expiry; every other request goes at once.
    const { transport, sent } = recordingTransport((partNumber, attempt) =>
      partNumber === 2 && attempt === 1 ? HOLD_MS : 0,
    )
    const bytes = testBytes(12 * MiB, 41)
    const result = await upload(new File([bytes], 'slow.bin'), { api, strategy: 'presigned', transport })

    expect(sha256(await readObject(client, result.bucket, result.key))).toBe(sha256(bytes))
    const part2 = sent.filter((request) => request.partNumber === 2)
    // s3rver says why; RGW 16.2 answers a bare AccessDenied with an empty Message.
    const expired =
      name === 's3rver'
        ? { code: 'AccessDenied', message: 'Request has expired' }
        : { code: 'AccessDenied', message: '' }
    expect(part2).toEqual([
      { partNumber: 2, status: 403, ...expired },
      { partNumber: 2, status: 200, code: undefined, message: undefined },
    ])
    const parts = calls.filter((call) => call.route === '/parts').map((call) => call.body.partNumbers)
    // All 3 parts' URLs came with the reply; the only /parts call is the renewal of part 2's.
    expect(Object.keys((calls[0]!.reply as PresignedMultipartReply).urls!)).toEqual(['1', '2', '3'])
    expect(parts).toEqual([[2]])
    expect(calls.at(-1)).toMatchObject({ route: '/complete', status: 200 })
  })
})

describe('partUrlExpiresIn', () => {
  it('is checked when the handler is created: 1..604800 seconds (SigV4 presigned URLs live at most 7 days)', () => {
    const base = {
      ...s3rver().credentials,
      bucket: s3rver().bucket,
      region: s3rver().region,
      endpoint: s3rver().endpoint,
    }
    for (const partUrlExpiresIn of [0, 604_801, 1.5]) {
      expect(() => createUploadHandler({ ...base, partUrlExpiresIn })).toThrow(
        `updraft: partUrlExpiresIn must be a whole number from 1 to 604800, got ${partUrlExpiresIn}`,
      )
    }
  })
})

describe('part URLs for a many-part upload (s3rver)', () => {
  it('the first FIRST_PART_URLS come with the reply; then batches of 2 × partConcurrency, each asked for while the last still has partConcurrency parts to go', async () => {
    const { api, calls, client } = await uploadApiFor(s3rver())
    // For each /parts call, how many part PUTs storage had answered when it went out.
    const answeredBefore: number[] = []
    let answered = 0
    const transport: Transport = async (request) => {
      if (request.url.endsWith('/parts')) answeredBefore.push(answered)
      const response = await fetchTransport(request)
      if (new URL(request.url).searchParams.has('partNumber')) answered++
      return response
    }
    const bytes = testBytes(11 * 5 * MiB + 1, 42) // 12 parts
    const result = await upload(new File([bytes], 'many.bin'), {
      api,
      strategy: 'presigned',
      partConcurrency: 1,
      transport,
    })

    expect(sha256(await readObject(client, result.bucket, result.key))).toBe(sha256(bytes))
    expect(Object.keys((calls[0]!.reply as PresignedMultipartReply).urls!)).toEqual([
      '1',
      '2',
      '3',
      '4',
      '5',
      '6',
      '7',
      '8',
    ])
    expect(calls.filter((call) => call.route === '/parts').map((call) => call.body.partNumbers)).toEqual([
      [9, 10],
      [11, 12],
    ])
    // Parts 9-10 were asked for as part 8 went out (7 answered), 11-12 as part 10 did: a part
    // never waited on /parts.
    expect(answeredBefore).toEqual([7, 9])
  })
})

describe("part URLs with checksum('md5') (s3rver)", () => {
  it("every part URL signs its Content-MD5: the reply's first URLs (signed without one) are left for /parts", async () => {
    const { api, calls, client } = await uploadApiFor(s3rver())
    const signedHeaders: string[] = []
    const transport: Transport = (request) => {
      const url = new URL(request.url)
      if (url.searchParams.has('partNumber')) signedHeaders.push(url.searchParams.get('X-Amz-SignedHeaders') ?? '')
      return fetchTransport(request)
    }
    const bytes = testBytes(2 * 5 * MiB + 1, 43) // 3 parts
    const result = await upload(new File([bytes], 'summed.bin'), {
      api,
      strategy: 'presigned',
      transport,
      ...checksum('md5'),
    })

    expect(sha256(await readObject(client, result.bucket, result.key))).toBe(sha256(bytes))
    expect(Object.keys((calls[0]!.reply as PresignedMultipartReply).urls!)).toEqual(['1', '2', '3'])
    expect(signedHeaders).toHaveLength(3)
    for (const headers of signedHeaders) expect(headers.split(';')).toContain('content-md5')
  })
})
