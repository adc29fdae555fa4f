// The engine's side of the unknown-length contract (docs/server.md, "Uploads of unknown length"), presigned mode, step by step against
// an upload API that answers as the contract says (the server side is built on another branch;
// tests/upload-unknown-size.test.ts runs both for real once merged): the first part is read
// before the upload API is asked; the request says `sizeUnknown` and no `filesize`; parts are cut to
// the reply's `partSize`, not the engine's; the reply's URLs serve full parts only, any other part
// gets its own from `/parts` with its length in `sizes`; `/complete` ends it, once.
import { describe, expect, it } from 'vitest'
import { uploadPresigned } from '../../engine/presigned.ts'
import type { Transport } from '../../engine/transport/transport.ts'
import { MiB } from '../../protocol/limits.ts'
import type { PresignedMultipartReply } from '../../protocol/wire.ts'

const SERVER_PART = 5 * MiB

async function* chunked(data: Uint8Array, size: number) {
  for (let at = 0; at < data.length; at += size) yield data.subarray(at, at + size)
}

function contractApi() {
  const calls: Array<{ route: string; body: Record<string, unknown> }> = []
  const puts: Array<{ partNumber: number; bytes: Uint8Array; signedFor: number }> = []
  const signed = (n: number, size: number) => `https://s3.test/b/k?partNumber=${n}&size=${size}`
  const transport: Transport = async (request) => {
    const url = new URL(request.url)
    if (url.host === 'page.test') {
      const route = url.pathname.split('/').pop()!
      const body = JSON.parse(String(request.body)) as Record<string, unknown>
      calls.push({ route, body })
      let reply: unknown
      if (route === 's3-upload') {
        reply = {
          key: 'k',
          bucket: 'b',
          region: 'us-east-1',
          uploadId: 'u',
          partSize: SERVER_PART,
          ticket: 't',
          urls: Object.fromEntries([1, 2, 3, 4, 5, 6, 7, 8].map((n) => [n, signed(n, SERVER_PART)])),
        } satisfies PresignedMultipartReply
      } else if (route === 'parts') {
        const { partNumbers, sizes } = body as { partNumbers: number[]; sizes: Record<string, number> }
        reply = { urls: Object.fromEntries(partNumbers.map((n) => [n, signed(n, sizes[n]!)])) }
      } else if (route === 'complete') reply = { url: 'https://s3.test/b/k', bucket: 'b', key: 'k', etag: '"e"' }
      else throw new Error(`unexpected route ${route}`)
      return { status: 200, header: () => null, body: JSON.stringify(reply) }
    }
    const bytes = request.body as Uint8Array
    // A URL bound to one length, as the contract's /parts signs it: any other length is refused.
    if (bytes.byteLength !== Number(url.searchParams.get('size')))
      return { status: 403, header: () => null, body: '<Error><Code>AccessDenied</Code></Error>' }
    puts.push({
      partNumber: Number(url.searchParams.get('partNumber')),
      bytes: bytes.slice(),
      signedFor: Number(url.searchParams.get('size')),
    })
    return {
      status: 200,
      header: (name) => (name.toLowerCase() === 'etag' ? `"${url.searchParams.get('partNumber')}"` : null),
      body: '',
    }
  }
  return { calls, puts, transport }
}

describe('presigned upload() of a stream of unknown length, against the contract', () => {
  it("asks with sizeUnknown, cuts parts to the reply's partSize, asks /parts only for the short last part, with its size", async () => {
    const { calls, puts, transport } = contractApi()
    const data = Uint8Array.from({ length: 12 * MiB + 7 }, (_, i) => (i * 7 + 3) % 251)
    const progress: Array<{ loaded: number; total: number }> = []
    const result = await uploadPresigned(chunked(data, 100_000), {
      api: 'http://page.test/api/s3-upload',
      filename: 'live.bin',
      contentType: 'application/octet-stream',
      // The engine's own part size differs from the server's: the server's cuts the parts.
      partSize: 6 * MiB,
      transport,
      onProgress: (p) => void progress.push(p),
    })
    expect(result).toMatchObject({ key: 'k', etag: '"e"' })

    const asked = calls[0]!.body
    expect(asked).toMatchObject({ filename: 'live.bin', sizeUnknown: true })
    expect(asked).not.toHaveProperty('filesize')
    expect(calls.map((call) => call.route)).toEqual(['s3-upload', 'parts', 'complete'])
    expect(calls[1]!.body).toEqual({ ticket: 't', partNumbers: [3], sizes: { 3: 2 * MiB + 7 } })
    expect(calls[2]!.body).toEqual({ ticket: 't', parts: [1, 2, 3].map((n) => ({ partNumber: n, etag: `"${n}"` })) })

    const sent = [...puts].sort((a, b) => a.partNumber - b.partNumber)
    expect(sent.map((put) => put.bytes.length)).toEqual([SERVER_PART, SERVER_PART, 2 * MiB + 7])
    const joined = new Uint8Array(data.length)
    let at = 0
    for (const put of sent) joined.set(put.bytes, (at += put.bytes.length) - put.bytes.length)
    expect(Buffer.compare(joined, data)).toBe(0)
    expect(progress.at(-1)).toEqual({ loaded: data.length, total: data.length })
  })

  it("a stream of exactly two parts uses the reply's URLs only: no /parts call", async () => {
    const { calls, puts, transport } = contractApi()
    const data = new Uint8Array(2 * SERVER_PART).fill(9)
    await uploadPresigned(chunked(data, 1 << 20), {
      api: 'http://page.test/api/s3-upload',
      filename: 'x',
      contentType: 'a/b',
      transport,
    })
    expect(calls.map((call) => call.route)).toEqual(['s3-upload', 'complete'])
    expect(puts.map((put) => put.signedFor)).toEqual([SERVER_PART, SERVER_PART])
  })

  it('a stream that ends within one part is asked for with its filesize, as a file is', async () => {
    const { calls, transport } = contractApi()
    await uploadPresigned(chunked(new Uint8Array(1000), 10), {
      api: 'http://page.test/api/s3-upload',
      filename: 'x',
      contentType: 'a/b',
      transport,
    }).catch(() => {})
    expect(calls[0]!.body).toMatchObject({ filesize: 1000 })
    expect(calls[0]!.body).not.toHaveProperty('sizeUnknown')
  })
})
