// Regression: the engine asked /parts for `2 × queueSize` URLs at once while the endpoint signs at
// most MAX_PARTS_PER_REQUEST (100) per call, so presigned multipart with queueSize >= 51 was
// refused with a 400. Both numbers now come from protocol/limits.ts; the endpoint here judges each
// /parts body with the server's own parser.
import { afterEach, describe, expect, it, vi } from 'vitest'
import { uploadPresigned } from '../../engine/upload-presigned.ts'
import { MAX_PARTS_PER_REQUEST, MIN_PART_SIZE } from '../../protocol/limits.ts'
import { parsePartsRequest, RequestError } from '../../protocol/validate.ts'
import type { PresignedMultipartReply } from '../../protocol/wire.ts'
import type { Transport } from '../../engine/transport.ts'

const PART_COUNT = 150

/** A Blob-shaped body of 150 parts that allocates nothing: the transport below never reads it. */
const hugeFile = {
  size: PART_COUNT * MIN_PART_SIZE,
  type: 'video/mp4',
  name: 'big.mp4',
  slice: () => new Blob(),
} as unknown as Blob

afterEach(() => vi.unstubAllGlobals())

describe('part URL batches', () => {
  it('never ask /parts for more URLs than one call may sign, whatever queueSize is', async () => {
    const asked: number[] = []
    vi.stubGlobal('fetch', async (url: string, init: RequestInit) => {
      const route = new URL(url, 'http://page.test').pathname.split('/').pop()
      const body = JSON.parse(String(init.body))
      if (route === 's3-upload') {
        const reply: PresignedMultipartReply = {
          key: 'k', bucket: 'b', region: 'us-east-1', uploadId: 'u', partSize: MIN_PART_SIZE, partCount: PART_COUNT, ticket: 't',
        }
        return Response.json(reply)
      }
      if (route === 'parts') {
        try {
          const { partNumbers } = parsePartsRequest(body)
          asked.push(partNumbers.length)
          return Response.json({ urls: Object.fromEntries(partNumbers.map((n) => [n, `https://s3.test/b/k?partNumber=${n}`])) })
        } catch (error) {
          return Response.json({ error: (error as RequestError).message }, { status: (error as RequestError).status })
        }
      }
      if (route === 'complete') return Response.json({ url: 'https://s3.test/b/k', bucket: 'b', key: 'k', etag: '"e"' })
      throw new Error(`unexpected route ${route}`)
    })
    const transport: Transport = async (request) => ({
      status: 200,
      header: (name) => (name.toLowerCase() === 'etag' ? `"${new URL(request.url).searchParams.get('partNumber')}"` : null),
      body: '',
    })

    const result = await uploadPresigned(hugeFile, { queueSize: 60, transport })

    expect(result.key).toBe('k')
    expect(asked.length).toBeGreaterThan(1)
    expect(Math.max(...asked)).toBeLessThanOrEqual(MAX_PARTS_PER_REQUEST)
    expect(asked.reduce((sum, n) => sum + n, 0)).toBeGreaterThanOrEqual(PART_COUNT)
  })
})
