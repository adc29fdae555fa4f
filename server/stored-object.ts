import { GetObjectCommand, type GetObjectCommandOutput, HeadObjectCommand, type HeadObjectCommandOutput, type S3Client } from '@aws-sdk/client-s3'
import { SIGNATURE_BYTES } from '../protocol/limits.ts'
import type { StoredHeaders } from './stored-extras.ts'

/** What `/complete` learns of an upload's object, from one storage request. */
export interface StoredObject {
  /** The whole object's length in bytes. */
  size: number
  /** As storage serves it ('' when it sends none). */
  contentType: string
  etag: string
  lastModified: Date | undefined
  /** The headers storage serves with the object, for the check of what was not issued (server/stored-extras.ts). */
  headers: StoredHeaders
  /** The first SIGNATURE_BYTES (all of a shorter object); undefined when they were not asked for. */
  firstBytes: Uint8Array | undefined
}

/**
 * The object at `key`, from one request: a HEAD, or, when `firstBytes` are wanted, a GET of
 * `bytes=0-15`, whose reply carries every header a HEAD does and whose Content-Range
 * (`bytes 0-15/{size}`) the whole length. Measured on s3rver 4, Ceph RGW 16.2 and Swift 2.30
 * (tests/stored-object.test.ts): all three answer 206 with the same headers as their HEAD. An
 * empty object has no byte 0, and stores differ: RGW and Swift (and AWS) answer 416 InvalidRange
 * with none of the object's headers, s3rver drops the connection. So an upload declared empty is
 * read with a HEAD, and the rare object found empty against its declared size (a lie, or a store
 * that could not answer the range) with a HEAD after the GET. A store that ignores Range answers
 * 200 with the whole body: only its first bytes are read, the rest is dropped.
 * Storage's errors (404, 403, …) reach the caller as the SDK throws them.
 */
export async function readStoredObject(
  s3: S3Client,
  { bucket, key, firstBytes, declaredSize }: { bucket: string; key: string; firstBytes: boolean; declaredSize: number | undefined },
): Promise<StoredObject> {
  if (!firstBytes || declaredSize === 0) return fromHead(await head(s3, bucket, key), firstBytes)
  let got: GetObjectCommandOutput
  try {
    got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key, Range: `bytes=0-${SIGNATURE_BYTES - 1}` }))
  } catch (error) {
    // 416: the object is empty (no byte 0 to send). No status: s3rver's dropped connection, likewise.
    const status = httpStatus(error)
    if (status === 416 || status === undefined) return fromHead(await head(s3, bucket, key), firstBytes)
    throw error
  }
  // A 206 of at most the bytes asked is read to its end, so its connection goes back to the pool.
  const whole = got.ContentLength !== undefined && got.ContentLength <= SIGNATURE_BYTES
  const body = got.Body
  const bytes = !body ? new Uint8Array() : whole ? await body.transformToByteArray() : await readPrefix(body.transformToWebStream(), SIGNATURE_BYTES)
  return {
    size: totalSize(got),
    contentType: got.ContentType ?? '',
    etag: got.ETag ?? '',
    lastModified: got.LastModified,
    headers: got,
    firstBytes: bytes,
  }
}

const head = (s3: S3Client, bucket: string, key: string) => s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }))

function fromHead(reply: HeadObjectCommandOutput, firstBytes: boolean): StoredObject {
  const size = reply.ContentLength ?? -1
  return {
    size,
    contentType: reply.ContentType ?? '',
    etag: reply.ETag ?? '',
    lastModified: reply.LastModified,
    headers: reply,
    // An empty object's first bytes are known without asking; a non-empty one's (a store that could
    // not answer the range) are not, and an empty list fails every signature: refused, as a lie.
    firstBytes: firstBytes ? new Uint8Array() : undefined,
  }
}

/**
 * The whole object's size: from Content-Range (`bytes 0-15/1000`) on a 206, from Content-Length
 * on a 200 (the store sent everything). -1 when neither says, which no declared size equals.
 */
function totalSize(got: GetObjectCommandOutput): number {
  const total = /\/(\d+)\s*$/.exec(got.ContentRange ?? '')?.[1]
  if (total !== undefined) return Number(total)
  return got.ContentRange === undefined ? (got.ContentLength ?? -1) : -1
}

/** Up to `limit` bytes from the body's start; the rest is cancelled, never read (a store that ignored Range sends all of it). */
async function readPrefix(body: ReadableStream<Uint8Array>, limit: number): Promise<Uint8Array> {
  const reader = body.getReader()
  const prefix = new Uint8Array(limit)
  let length = 0
  try {
    while (length < limit) {
      const { done, value } = await reader.read()
      if (done) return prefix.subarray(0, length)
      const take = Math.min(value.byteLength, limit - length)
      prefix.set(value.subarray(0, take), length)
      length += take
    }
    return prefix
  } finally {
    // The rest of a body longer than asked is not wanted: its connection is dropped, not drained.
    reader.cancel().catch(() => {})
  }
}

export const httpStatus = (error: unknown) => (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode
