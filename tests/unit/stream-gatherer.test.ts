// The stream gatherer (engine/core/stream-body.ts): chunks of any size become parts of exactly
// partSize bytes (the last shorter) whose concatenation is the stream; a stream that ends within
// one part is its bytes; declared sizes are held to; failures are typed. Part sizes here are
// tiny (the gatherer itself takes any): S3's 5 MiB minimum is checked where an upload plans.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { BodyError, UploadAbortedError } from '../../engine/core/errors.ts'
import { resolveOptions } from '../../engine/core/options.ts'
import { byteReader, GATHER_BELOW, openStream, type PartStream } from '../../engine/core/stream-body.ts'

async function* chunksOf(data: Uint8Array, sizes: number[]) {
  let at = 0
  for (let i = 0; at < data.length; i++) {
    const size = sizes.length ? sizes[i % sizes.length]! : data.length
    yield data.slice(at, (at += size))
  }
}

const asReadableStream = (iterable: AsyncIterable<Uint8Array>) => {
  const iterator = iterable[Symbol.asyncIterator]()
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await iterator.next()
      if (done) controller.close()
      else controller.enqueue(value)
    },
  })
}

const options = (partSize: number, extra: { size?: number; signal?: AbortSignal } = {}) => ({
  ...resolveOptions({}),
  partSize,
  ...extra,
})

async function allParts(stream: PartStream, partSize: number) {
  const parts: Uint8Array[] = []
  for (let part = await stream.next(partSize); part; part = await stream.next(partSize)) parts.push(part)
  return parts
}

const concat = (parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0))
  let at = 0
  for (const part of parts) out.set(part, (at += part.length) - part.length)
  return out
}

describe('stream gatherer', () => {
  it('property: for any chunking, parts are partSize long (the last shorter) and concatenate to the input', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ minLength: 0, maxLength: 3000 }),
        fc.array(fc.integer({ min: 1, max: 700 }), { minLength: 0, maxLength: 8 }),
        fc.integer({ min: 1, max: 600 }),
        fc.boolean(),
        fc.boolean(),
        async (data, sizes, partSize, declared, readable) => {
          const source = chunksOf(data, sizes)
          const opened = await openStream(
            readable ? asReadableStream(source) : source,
            options(partSize, declared ? { size: data.length } : {}),
          )
          if (opened instanceof Uint8Array) {
            expect(data.length).toBeLessThanOrEqual(partSize)
            expect([...opened]).toEqual([...data])
            return
          }
          expect(data.length).toBeGreaterThan(partSize)
          expect(opened.size).toBe(declared ? data.length : undefined)
          const parts = await allParts(opened, partSize)
          expect(parts.slice(0, -1).every((part) => part.length === partSize)).toBe(true)
          expect(parts.at(-1)!.length).toBeGreaterThan(0)
          expect(parts.at(-1)!.length).toBeLessThanOrEqual(partSize)
          expect([...concat(parts)]).toEqual([...data])
          expect(opened.received).toBe(data.length)
        },
      ),
      { numRuns: 300 },
    )
  })

  it('a chunk that makes a whole part is sent as a view of it, not a copy; small chunks are gathered', async () => {
    const big = new Uint8Array(40_000).fill(7)
    const reader = byteReader(
      (async function* () {
        yield big
      })(),
    )
    const part = await reader.read(20_000)
    expect(part.buffer).toBe(big.buffer)
    const small = byteReader(chunksOf(new Uint8Array(GATHER_BELOW * 3), [100]))
    const gathered = await small.read(GATHER_BELOW * 2)
    expect(gathered.length).toBe(GATHER_BELOW * 2)
  })

  it('an empty stream is an empty body', async () => {
    const opened = await openStream(chunksOf(new Uint8Array(0), []), options(10))
    expect(opened).toEqual(new Uint8Array(0))
  })

  it('a stream longer than its declared size fails with a BodyError, and so does a shorter one', async () => {
    const data = new Uint8Array(100)
    await expect(openStream(chunksOf(data, [10]), options(50, { size: 40 }))).rejects.toThrow(BodyError)
    await expect(openStream(chunksOf(data, [10]), options(200, { size: 150 }))).rejects.toThrow(
      'The body ended after 100 bytes, short of its declared size of 150',
    )
    const long = (await openStream(chunksOf(data, [10]), options(30, { size: 60 }))) as PartStream
    await expect(allParts(long, 30)).rejects.toMatchObject({ name: 'BodyError', received: 70 })
  })

  it('a stream that fails mid-way rejects with a BodyError carrying its error as cause', async () => {
    const failure = new Error('disk gone')
    async function* failing() {
      yield new Uint8Array(30)
      yield new Uint8Array(30)
      throw failure
    }
    const opened = (await openStream(failing(), options(40))) as PartStream
    expect(await opened.next(40)).toHaveLength(40)
    const error = await opened.next(40).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(BodyError)
    expect(error).toMatchObject({ cause: failure, received: 60 })
    expect((error as Error).message).toBe('Reading the body failed after 60 bytes: disk gone')
  })

  it('chunks that are not bytes are refused with a TypeError naming them', async () => {
    async function* strings() {
      yield 'text' as unknown as Uint8Array
    }
    await expect(openStream(strings(), options(10))).rejects.toThrow(/must give Uint8Array chunks.*\[object String\]/)
    await expect(openStream(42 as unknown as AsyncIterable<Uint8Array>, options(10))).rejects.toThrow(TypeError)
  })

  it('an abort ends a read that waits on a stream that never yields, and releases the stream', async () => {
    let released = false
    const stalled = new ReadableStream<Uint8Array>({
      pull: () => new Promise(() => {}),
      cancel: () => void (released = true),
    })
    const controller = new AbortController()
    const opening = openStream(stalled, options(10, { signal: controller.signal }))
    controller.abort()
    await expect(opening).rejects.toBeInstanceOf(UploadAbortedError)
    expect(released).toBe(true)
  })

  it('a signal aborted before the first read stops the stream; it is never taken for an empty body', async () => {
    await expect(
      openStream(chunksOf(new Uint8Array(35), [7]), options(10, { signal: AbortSignal.abort() })),
    ).rejects.toBeInstanceOf(UploadAbortedError)
  })

  it('a stream read to its end lets go of the upload signal: a page-wide signal keeps no reader alive', async () => {
    const listeners = new Set<unknown>()
    const signal = {
      aborted: false,
      addEventListener: (_: string, listener: unknown) => void listeners.add(listener),
      removeEventListener: (_: string, listener: unknown) => void listeners.delete(listener),
    } as unknown as AbortSignal
    const stream = (await openStream(chunksOf(new Uint8Array(35), [7]), options(10, { signal }))) as PartStream
    expect(listeners.size).toBe(1)
    expect(concat(await allParts(stream, 10)).length).toBe(35)
    expect(listeners.size).toBe(0)
  })

  it('reads one part ahead of those handed out, no more: memory stays at slots + 1 parts', async () => {
    let pulled = 0
    async function* counting() {
      for (;;) {
        pulled++
        yield new Uint8Array(10)
      }
    }
    const opened = (await openStream(counting(), options(10))) as PartStream
    await opened.next(10)
    await opened.next(10)
    await new Promise((resolve) => setTimeout(resolve, 10))
    // Parts 1 and 2 handed out, part 3 read ahead, part 4 not: 30 bytes.
    expect(opened.received).toBe(30)
    expect(pulled).toBe(3)
    opened.cancel()
  })
})
