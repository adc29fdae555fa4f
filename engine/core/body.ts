import type { ResolvedOptions } from './options.ts'
import type { PartStream } from './stream-body.ts'

/**
 * What an upload may send: a `Blob` (a `File`), bytes in memory (a `Uint8Array`, so a Node
 * `Buffer`), or a stream of byte chunks (a `ReadableStream<Uint8Array>`, or any async iterable of
 * `Uint8Array`, which Node's streams are). A stream's length is its `size` option when given, else
 * known only once it ends.
 */
export type UploadBody = Blob | Uint8Array | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>

/** A body the engine can cut anywhere without reading it: parts are `Blob.slice` or `subarray` views, never copies. */
export type Bytes = Blob | Uint8Array

/** A Blob, or anything shaped like one (tests pass Blob-shaped bodies that allocate nothing). */
export const isBlob = (body: unknown): body is Blob =>
  !(body instanceof Uint8Array) && typeof (body as Blob)?.slice === 'function'

export const isBytes = (body: unknown): body is Bytes => body instanceof Uint8Array || isBlob(body)

/** A body's length in bytes; a stream's declared `size`, undefined when it has none. */
export function sizeOf(body: Bytes): number
export function sizeOf(body: Bytes | PartStream): number | undefined
export function sizeOf(body: Bytes | PartStream) {
  return (body as Blob).size ?? (body as Uint8Array).byteLength
}

/** A view of `[start, end)`: `subarray` for bytes (Uint8Array's `slice` would copy them). */
export const slice = (body: Bytes, start: number, end: number) =>
  body instanceof Uint8Array ? body.subarray(start, end) : body.slice(start, end)

/**
 * Runs `send` with the body as the engine sends it: a Blob or bytes as they are; a stream read up
 * to one part first, which becomes bytes when the stream ends within it (one PUT), else a
 * {@link PartStream}. Anything but a Blob goes through the body module (engine/core/stream-body.ts,
 * a chunk of its own), imported only then, so pages that upload Files never ship it; it also
 * checks that a `named` upload (one through the upload API) of bytes or a stream names them. A
 * stream is released whenever the upload fails.
 */
export async function withBody<T>(
  body: UploadBody,
  options: ResolvedOptions & { size?: number; filename?: string; contentType?: string },
  send: (body: Bytes | PartStream) => Promise<T>,
  named?: boolean,
): Promise<T> {
  if (isBlob(body)) return send(body)
  const { openBody } = await import('./stream-body.ts')
  const opened = await openBody(body, options, named)
  return isBytes(opened)
    ? send(opened)
    : send(opened).catch((error: unknown) => {
        opened.cancel()
        throw error
      })
}
