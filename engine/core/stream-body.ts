import { MAX_PARTS } from '../../protocol/limits.ts'
import { BodyError, UploadAbortedError, UploadError } from './errors.ts'
import type { ResolvedOptions } from './options.ts'

/**
 * A stream body longer than one part, read part by part as slots free up (engine/core/stream-body.ts,
 * loaded only when a stream is given).
 */
export interface PartStream {
  /** The `size` the caller declared; undefined when the length is known only at the stream's end. */
  readonly size: number | undefined
  /** Bytes read from the stream so far. */
  readonly received: number
  /**
   * The next `partSize` bytes (fewer: the last part), or undefined once the stream has ended.
   * Rejects with a `BodyError` when the stream fails or breaks its declared `size`.
   */
  next(partSize: number): Promise<Uint8Array | undefined>
  /**
   * The whole rest of a stream of declared `size`, which the upload API chose to take as one PUT.
   * Rejects with an `UploadError` when the length is unknown (only a multipart upload can take it).
   */
  whole(): Promise<Uint8Array>
  /** Stops reading and releases the stream (the upload failed or was aborted). */
  cancel(): void
}

// Stream bodies: loaded (a dynamic import in engine/core/body.ts) only when an upload is given a
// ReadableStream or an async iterable, so pages that send Files never ship it.

/**
 * The seed's "stream buffering threshold: 8192 bytes or more" is the AWS SDK's: it merges small
 * chunks until at least 8192 bytes before writing them out. Nothing here goes out smaller than a
 * part (5 MiB or more), so what the threshold decides is how a part is gathered: a chunk under
 * 8192 bytes is copied at once into a run of up to {@link RUN_BYTES} (a stream of 1-byte chunks
 * holds a few runs per part, not millions of tiny arrays); a chunk of 8192 bytes or more is held
 * as it is, a view, and copied once when the part is assembled — or never, when it alone makes
 * the part (a chunk of a part or more, as fs streams with a large highWaterMark give).
 */
export const GATHER_BELOW = 8192
const RUN_BYTES = 64 * 1024

/** A stream read as bytes: `read(n)` gives exactly `n` bytes, fewer only at the stream's end. */
export interface ByteReader {
  read(n: number): Promise<Uint8Array>
  /** Puts bytes back in front of what is still to read. */
  unread(bytes: Uint8Array): void
  /** Bytes taken from the stream so far (unread ones included). */
  readonly received: number
  /** Releases the stream; a read waiting on it rejects with `UploadAbortedError`. */
  cancel(): void
}

/**
 * Reads `source` chunk by chunk. A chunk is kept as the stream gave it (not copied when it is
 * 8192 bytes or more): the stream must not reuse a chunk's memory once it has handed it over.
 * `limit`: the declared size, beyond which reading fails with a `BodyError`.
 */
export function byteReader(
  source: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>,
  limit = Infinity,
): ByteReader {
  const { pull, release } = chunksOf(source)
  const held: Uint8Array[] = []
  let ended = false
  let received = 0
  let stopped: Error | undefined
  // Rejects the pull in progress: a stream that never yields again (a recorder left running)
  // must not hold an aborted upload. One plain promise per chunk (no race, no async wrapper):
  // a stream of 1-byte chunks pays this per byte.
  let interrupt: ((reason: Error) => void) | undefined
  const pullOnce = () =>
    new Promise<IteratorResult<unknown>>((resolve, reject) => {
      if (stopped) return reject(stopped)
      interrupt = reject
      pull().then(resolve, reject)
    })

  const nextChunk = async (): Promise<Uint8Array | undefined> => {
    let result: IteratorResult<unknown>
    try {
      result = await pullOnce()
    } catch (error) {
      if (error instanceof UploadAbortedError) throw error
      throw new BodyError(
        `Reading the body failed after ${received} bytes: ${(error as Error)?.message ?? String(error)}`,
        received,
        { cause: error },
      )
    }
    if (result.done) return undefined
    const chunk = result.value
    if (!(chunk instanceof Uint8Array)) {
      throw new TypeError(
        `updraft: a stream body must give Uint8Array chunks (bytes), got ${Object.prototype.toString.call(chunk)}: a Node stream with setEncoding() gives strings`,
      )
    }
    received += chunk.byteLength
    if (received > limit)
      throw new BodyError(
        `The body is longer than its declared size of ${limit} bytes: fix the size option, or leave it out`,
        received,
      )
    return chunk
  }

  return {
    get received() {
      return received
    },
    unread(bytes) {
      if (bytes.byteLength) held.unshift(bytes)
    },
    cancel() {
      // Set before the call: with no read in progress there is no `interrupt`, and the next read
      // must still see the stream as stopped, not ended.
      stopped = new UploadAbortedError()
      interrupt?.(stopped)
      release()
    },
    async read(n) {
      const views: Uint8Array[] = []
      let have = 0
      // The run small chunks are being copied into, and how much of it is filled.
      let run: Uint8Array | undefined
      let filled = 0
      const closeRun = () => {
        if (run) views.push(run.subarray(0, filled))
        run = undefined
      }
      while (have < n) {
        let chunk = held.shift() ?? (ended ? undefined : await nextChunk())
        if (!chunk) {
          ended = true
          break
        }
        if (chunk.byteLength > n - have) {
          held.unshift(chunk.subarray(n - have))
          chunk = chunk.subarray(0, n - have)
        }
        if (chunk.byteLength >= GATHER_BELOW) {
          closeRun()
          views.push(chunk)
        } else if (chunk.byteLength) {
          if (run && filled + chunk.byteLength > run.byteLength) closeRun()
          if (!run) (run = new Uint8Array(Math.min(RUN_BYTES, n - have))), (filled = 0)
          run.set(chunk, filled)
          filled += chunk.byteLength
        }
        have += chunk.byteLength
      }
      closeRun()
      return views.length === 1 ? views[0]! : concat(views, have)
    },
  }
}

/**
 * Opens a stream body for an upload: reads it up to one part (`partSize`, plus one byte to see
 * whether it goes on). A stream that ends within that is returned as its bytes, and goes as one
 * PUT; a longer one becomes a {@link PartStream}, read part by part from its start. `size`, when
 * given, is checked against what the stream gives.
 */
/**
 * A body that is not a Blob, as the engine sends it: bytes as they are, a stream opened (see
 * {@link openStream}). `named`: an upload through the upload API, which builds the key from a
 * filename and signs a content type, and only a File carries its own.
 */
export function openBody(
  body: Uint8Array | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>,
  options: ResolvedOptions & { size?: number; filename?: string; contentType?: string },
  named?: boolean,
): Promise<Uint8Array | PartStream> {
  if (named && !(options.filename && options.contentType)) {
    throw new TypeError('updraft: upload() of bytes or a stream needs the filename and contentType options')
  }
  return body instanceof Uint8Array ? Promise.resolve(body) : openStream(body, options)
}

export async function openStream(
  source: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>,
  { size, partSize, signal }: ResolvedOptions & { size?: number },
): Promise<Uint8Array | PartStream> {
  if (size !== undefined && !(Number.isSafeInteger(size) && size >= 0)) {
    throw new RangeError(`updraft: size must be a whole number of bytes, got ${size}`)
  }
  const reader = byteReader(source, size)
  const cancel = () => reader.cancel()
  signal?.addEventListener('abort', cancel, { once: true })
  if (signal?.aborted) cancel()
  const checkEnd = () => {
    if (size !== undefined && reader.received < size) {
      throw new BodyError(
        `The body ended after ${reader.received} bytes, short of its declared size of ${size}: fix the size option, or leave it out`,
        reader.received,
      )
    }
  }
  try {
    const first = await reader.read(partSize + 1)
    if (first.byteLength <= partSize) {
      checkEnd()
      signal?.removeEventListener('abort', cancel)
      return first
    }
    reader.unread(first)
  } catch (error) {
    cancel()
    throw error
  }

  let parts = 0
  const readPart = async (n: number) => {
    const part = await reader.read(n)
    if (!part.byteLength) {
      // Ended: nothing left to interrupt, and a page-wide signal must not keep the reader alive.
      signal?.removeEventListener('abort', cancel)
      return void checkEnd()
    }
    if (++parts > MAX_PARTS) {
      throw new BodyError(
        `The body is longer than ${MAX_PARTS} parts of ${n} bytes: set a larger partSize, or give its size`,
        reader.received,
      )
    }
    return part
  }
  // One part read ahead while the others are sent: a stream holds at most partConcurrency parts
  // in flight (kept until storage accepts them, since a retry sends them again) plus this one.
  // Parts are read only as slots free up, so a fast stream waits (backpressure).
  let ahead: Promise<Uint8Array | undefined> | undefined
  return {
    size,
    get received() {
      return reader.received
    },
    next(n) {
      const part = ahead ?? readPart(n)
      ahead = part.then(() => readPart(n))
      ahead.catch(() => {})
      return part
    },
    async whole() {
      // A next-s3-upload route answers one PUT URL to any request: it cannot take a stream of
      // unknown length, which would have to be held whole.
      if (size === undefined) {
        throw new UploadError(
          "The upload API answered one PUT URL for a stream of unknown length: give the size option, or use an upload API that speaks Updraft's protocol",
        )
      }
      const body = await reader.read(size)
      await readPart(1) // the end, or a BodyError for bytes beyond size
      return body
    },
    cancel() {
      signal?.removeEventListener('abort', cancel)
      cancel()
    },
  }
}

/** `pull()` gives the next chunk as an iterator result; `release()` lets the stream go. */
function chunksOf(source: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>) {
  // A reader rather than async iteration: Safari's ReadableStream is not async iterable.
  if (typeof (source as ReadableStream).getReader === 'function') {
    const reader = (source as ReadableStream<Uint8Array>).getReader()
    return { pull: () => reader.read(), release: () => void reader.cancel().catch(() => {}) }
  }
  if (source && typeof (source as AsyncIterable<Uint8Array>)[Symbol.asyncIterator] === 'function') {
    const iterator = (source as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]()
    return {
      pull: () => iterator.next(),
      release: () =>
        void Promise.resolve()
          .then(() => iterator.return?.())
          .catch(() => {}),
    }
  }
  throw new TypeError(
    `updraft: the body must be a Blob, a Uint8Array, a ReadableStream or an async iterable of Uint8Array chunks, got ${Object.prototype.toString.call(source)}`,
  )
}

function concat(views: Uint8Array[], length: number): Uint8Array {
  const bytes = new Uint8Array(length)
  let at = 0
  for (const view of views) bytes.set(view, (at += view.byteLength) - view.byteLength)
  return bytes
}
