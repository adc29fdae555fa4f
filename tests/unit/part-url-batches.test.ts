// Regression: the engine asked /parts for `2 × queueSize` URLs at once while the upload API signs at
// most MAX_PARTS_PER_REQUEST (100) per call, so presigned multipart with queueSize (now
// partConcurrency) >= 51 was
// refused with a 400. Both numbers now come from protocol/limits.ts; the upload API here judges each
// /parts body with the server's own parser.
import { describe, expect, it } from 'vitest'
import { uploadPresigned } from '../../engine/presigned.ts'
import type { Transport } from '../../engine/transport/transport.ts'
import { MAX_PARTS_PER_REQUEST, MIN_PART_SIZE } from '../../protocol/limits.ts'
import type { PresignedMultipartReply } from '../../protocol/wire.ts'
import { parsePartsRequest } from '../../server/parse-requests.ts'
import type { RequestError } from '../../server/request-error.ts'

const PART_COUNT = 150

/** A Blob-shaped body of 150 parts that allocates nothing: the transport below never reads it. */
const hugeFile = {
  size: PART_COUNT * MIN_PART_SIZE,
  type: 'video/mp4',
  name: 'big.mp4',
  slice: () => new Blob(),
} as unknown as Blob

describe('part URL batches', () => {
  it('never ask /parts for more URLs than one call may sign, whatever partConcurrency is', async () => {
    const asked: number[] = []
    const answerAsApi = (route: string, body: Record<string, unknown>): unknown => {
      if (route === 's3-upload') {
        const reply: PresignedMultipartReply = {
          key: 'k',
          bucket: 'b',
          region: 'us-east-1',
          uploadId: 'u',
          partSize: MIN_PART_SIZE,
          partCount: PART_COUNT,
          ticket: 't',
        }
        return reply
      }
      if (route === 'parts') {
        try {
          const { partNumbers } = parsePartsRequest(body)
          asked.push(partNumbers.length)
          return { urls: Object.fromEntries(partNumbers.map((n) => [n, `https://s3.test/b/k?partNumber=${n}`])) }
        } catch (error) {
          return { error: (error as RequestError).message }
        }
      }
      if (route === 'complete') return { url: 'https://s3.test/b/k', bucket: 'b', key: 'k', etag: '"e"' }
      throw new Error(`unexpected route ${route}`)
    }
    // Upload API calls and storage requests both go through the upload's transport.
    const transport: Transport = async (request) => {
      const url = new URL(request.url)
      if (url.host === 'page.test') {
        const reply = answerAsApi(url.pathname.split('/').pop()!, JSON.parse(String(request.body)))
        return {
          status: (reply as { error?: string }).error ? 400 : 200,
          header: () => null,
          body: JSON.stringify(reply),
        }
      }
      return {
        status: 200,
        header: (name) => (name.toLowerCase() === 'etag' ? `"${url.searchParams.get('partNumber')}"` : null),
        body: '',
      }
    }

    const result = await uploadPresigned(hugeFile, {
      api: 'http://page.test/api/s3-upload',
      partConcurrency: 60,
      transport,
    })

    expect(result.key).toBe('k')
    expect(asked.length).toBeGreaterThan(1)
    expect(Math.max(...asked)).toBeLessThanOrEqual(MAX_PARTS_PER_REQUEST)
    expect(asked.reduce((sum, n) => sum + n, 0)).toBeGreaterThanOrEqual(PART_COUNT)
  })

  // Issue 14: a plan without partCount is for a stream of unknown length, never for a Blob.
  it.each([
    [3, '3'],
    [undefined, 'no'],
  ])(
    'a plan that does not fit the file (partCount %s) fails before any byte is sent, and the upload the upload API created is aborted',
    async (partCount, planned) => {
      const routes: string[] = []
      let storageRequests = 0
      const transport: Transport = async (request) => {
        const url = new URL(request.url)
        if (url.host !== 'page.test') {
          storageRequests++
          return { status: 200, header: () => '"e"', body: '' }
        }
        const route = url.pathname.split('/').pop()!
        routes.push(route)
        const reply: PresignedMultipartReply = {
          key: 'k',
          bucket: 'b',
          region: 'us-east-1',
          uploadId: 'u',
          partSize: MIN_PART_SIZE,
          partCount,
          ticket: 't',
        }
        return {
          status: 200,
          header: () => null,
          body: JSON.stringify(route === 's3-upload' ? reply : route === 'abort' ? { aborted: true } : { urls: {} }),
        }
      }
      let cleaned!: (error: unknown) => void
      const cleanup = new Promise((resolve) => (cleaned = resolve))
      const failure = uploadPresigned(hugeFile, {
        api: 'http://page.test/api/s3-upload',
        transport,
        onCleanup: cleaned,
      })
      await expect(failure).rejects.toThrow(
        `The upload API planned ${planned} parts of ${MIN_PART_SIZE} bytes for a ${hugeFile.size}-byte file`,
      )
      expect(await cleanup).toBeUndefined()
      expect(routes).toEqual(['s3-upload', 'abort'])
      expect(storageRequests).toBe(0)
    },
  )
})
