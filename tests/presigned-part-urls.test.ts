// Presigned multipart part URLs, end to end over HTTP: the engine fetches them in batches just
// ahead of need (never all at once), and re-asks for a URL that storage refuses as expired.
import { describe, expect, it } from 'vitest'
import { fetchTransport, upload, type Transport } from '../engine/index.ts'
import { xmlText } from '../protocol/xml.ts'
import { createUploadHandler } from '../server/index.ts'
import { readObject, sha256, testBytes } from './helpers/s3-client.ts'
import { useEndpointFixture } from './helpers/endpoint-fixture.ts'

const MiB = 1024 * 1024
/** Part URLs live this long here, so one can be made to expire in a test's time. */
const PART_URL_SECONDS = 3
/** Longer than PART_URL_SECONDS plus the up-to-1 s that X-Amz-Date's truncation to seconds takes off. */
const HOLD_MS = (PART_URL_SECONDS + 1.5) * 1000

const { stores, endpointFor, s3rver } = useEndpointFixture()

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
    sent.push({ partNumber, status: response.status, code: xmlText(response.body, 'Code'), message: xmlText(response.body, 'Message') })
    return response
  }
  return { transport, sent }
}

describe.each(Object.entries(stores))('a part URL that expired before use, on %s', (name, store) => {
  it('is refused by storage, re-asked from /parts, and the upload completes byte-exact', async () => {
    const { endpoint, calls, client } = await endpointFor(store(), { partUrlExpiresIn: PART_URL_SECONDS })
    // Part 2's first PUT waits past its URL's expiry; every other request goes at once.
    const { transport, sent } = recordingTransport((partNumber, attempt) => (partNumber === 2 && attempt === 1 ? HOLD_MS : 0))
    const bytes = testBytes(12 * MiB, 41)
    const result = await upload(new File([bytes], 'slow.bin'), { endpoint, strategy: 'presigned', transport })

    expect(sha256(await readObject(client, result.bucket, result.key))).toBe(sha256(bytes))
    const part2 = sent.filter((request) => request.partNumber === 2)
    // s3rver says why; RGW 16.2 answers a bare AccessDenied with an empty Message.
    const expired = name === 's3rver' ? { code: 'AccessDenied', message: 'Request has expired' } : { code: 'AccessDenied', message: '' }
    expect(part2).toEqual([{ partNumber: 2, status: 403, ...expired }, { partNumber: 2, status: 200, code: undefined, message: undefined }])
    const parts = calls.filter((call) => call.route === '/parts').map((call) => call.body.partNumbers)
    // The first batch covers all 3 parts; the renewal asks again from part 2.
    expect(parts[0]).toEqual([1, 2, 3])
    expect(parts.slice(1).map((numbers) => (numbers as number[])[0])).toEqual([2])
    expect(calls.at(-1)).toMatchObject({ route: '/complete', status: 200 })
  })
})

describe('partUrlExpiresIn', () => {
  it('is checked when the handler is created: 1..604800 seconds (SigV4 presigned URLs live at most 7 days)', () => {
    const base = { ...s3rver().credentials, bucket: s3rver().bucket, region: s3rver().region, endpoint: s3rver().endpoint }
    for (const partUrlExpiresIn of [0, 604_801, 1.5]) {
      expect(() => createUploadHandler({ ...base, partUrlExpiresIn })).toThrow(
        `updraft: partUrlExpiresIn must be a whole number from 1 to 604800, got ${partUrlExpiresIn}`,
      )
    }
  })
})

describe('part URLs for a many-part upload (s3rver)', () => {
  it('come in batches of 2 × queueSize, each asked for only when its first part is due', async () => {
    const { endpoint, calls, client } = await endpointFor(s3rver())
    const partsCalls = () => calls.filter((call) => call.route === '/parts')
    // For each part PUT: how many /parts calls had been answered when it was sent.
    const batchesBefore: Record<number, number> = {}
    const { transport } = recordingTransport((partNumber) => {
      // 0: not a part (the endpoint's own calls go through the transport too).
      if (partNumber > 0) batchesBefore[partNumber] = partsCalls().length
      return 0
    })
    const bytes = testBytes(25 * MiB + 1, 42) // 6 parts
    const result = await upload(new File([bytes], 'many.bin'), { endpoint, strategy: 'presigned', queueSize: 1, transport })

    expect(sha256(await readObject(client, result.bucket, result.key))).toBe(sha256(bytes))
    expect(partsCalls().map((call) => call.body.partNumbers)).toEqual([[1, 2], [3, 4], [5, 6]])
    // Batch k+1 was not fetched while batch k's parts were still going out.
    expect(batchesBefore).toEqual({ 1: 1, 2: 1, 3: 2, 4: 2, 5: 3, 6: 3 })
  })
})
