import {
  GetObjectCommand,
  type GetObjectCommandOutput,
  HeadObjectCommand,
  type HeadObjectCommandOutput,
  type S3Client,
} from '@aws-sdk/client-s3'
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
 * with none of the object's headers, s3rver a 206 whose byte never comes. So an upload declared
 * empty is read with a HEAD, and the rare object found empty against its declared size (a lie)
 * with a HEAD after a 416. A store that ignores Range answers 200 with the whole body: only its
 * first bytes are read, the rest is dropped. Storage's errors (404, 403, …) reach the caller as
 * the SDK throws them.
 */
export async function readStoredObject(
  s3: S3Client,
  {
    bucket,
    key,
    firstBytes,
    declaredSize,
  }: { bucket: string; key: string; firstBytes: boolean; declaredSize: number | undefined },
): Promise<StoredObject> {
  if (!firstBytes || declaredSize === 0) return fromHead(await head(s3, bucket, key), firstBytes)
  let got: GetObjectCommandOutput
  try {
    got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key, Range: `bytes=0-${SIGNATURE_BYTES - 1}` }))
  } catch (error) {
    // 416: the object is empty, there is no byte 0 to send, and the reply carries none of its headers.
    if (httpStatus(error) === 416) return fromHead(await head(s3, bucket, key), firstBytes)
    throw error
  }
  const size = totalSize(got)
  return {
    size,
    contentType: got.ContentType ?? '',
    etag: got.ETag ?? '',
    lastModified: got.LastModified,
    headers: got,
    firstBytes: await readFirstBytes(got, Math.min(SIGNATURE_BYTES, Math.max(size, 0))),
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
    // Read with a HEAD only when it is empty, as far as the upload knows: no bytes to ask for. (A
    // non-empty one found here has none either; the wrong size refuses it first.)
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

/**
 * The body's first `wanted` bytes. A 206 of exactly those is read to its end, so its connection
 * goes back to the pool; anything longer (a store that ignored Range and sends the whole object)
 * is cancelled once they are in. None wanted (an empty object) reads nothing: s3rver answers an
 * empty object's range with `Content-Range: bytes 0-0/0` and a Content-Length of 1, then never
 * sends the byte (the connection drops ~6 s later).
 */
async function readFirstBytes(
  { Body: body, ContentLength: length }: GetObjectCommandOutput,
  wanted: number,
): Promise<Uint8Array> {
  if (!body) return new Uint8Array()
  if (wanted > 0 && length === wanted) return body.transformToByteArray()
  const reader = body.transformToWebStream().getReader()
  const prefix = new Uint8Array(wanted)
  let filled = 0
  try {
    while (filled < wanted) {
      const { done, value } = await reader.read()
      if (done) break
      const take = Math.min(value.byteLength, wanted - filled)
      prefix.set(value.subarray(0, take), filled)
      filled += take
    }
    return prefix.subarray(0, filled)
  } finally {
    // The rest is not wanted: the connection is dropped rather than drained.
    reader.cancel().catch(() => {})
  }
}

export const httpStatus = (error: unknown) =>
  (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode
