import { createHash } from 'node:crypto'
import { GetObjectCommand, HeadObjectCommand, S3Client } from '@aws-sdk/client-s3'

export interface StoreAccess {
  endpoint: string
  region: string
  credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string }
}

/** The AWS SDK as an independent reader: tests check what landed on storage with it, not with the engine. */
export function sdkClient(store: StoreAccess): S3Client {
  return new S3Client({
    endpoint: store.endpoint,
    region: store.region,
    credentials: store.credentials,
    forcePathStyle: true,
    // SDK default checksums trip up S3-compatible stores (RGW answers 411 to streamed bodies).
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  })
}

export async function readObject(client: S3Client, bucket: string, key: string): Promise<Uint8Array> {
  const reply = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }))
  return reply.Body!.transformToByteArray()
}

/** Whether storage holds `key` (HEAD: 404 is no; any other failure is thrown). */
export async function objectExists(client: S3Client, bucket: string, key: string): Promise<boolean> {
  try {
    await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }))
    return true
  } catch (error) {
    if ((error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return false
    throw error
  }
}

export const sha256 = (bytes: Uint8Array | ArrayBuffer) =>
  createHash('sha256').update(new Uint8Array(bytes)).digest('hex')

/**
 * Deterministic pseudo-random bytes (xorshift), so a misplaced or repeated part changes the hash.
 * Generated 4 bytes at a time: 64 MiB takes well under a second.
 */
export function testBytes(size: number, seed = 1): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(size)
  const words = new Uint32Array(bytes.buffer, 0, Math.floor(size / 4))
  let x = seed >>> 0 || 1
  for (let i = 0; i < words.length; i++) {
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    words[i] = x >>> 0
  }
  for (let i = words.length * 4; i < size; i++) bytes[i] = i & 0xff
  return bytes
}

/**
 * The first bytes that files of these types start with: with them, test bytes pass the upload API's
 * file-signature check at /complete (server/file-signatures.ts), which refuses a "PNG" that is not one.
 */
const FILE_SIGNATURES: Record<string, string | number[]> = {
  'image/png': [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a],
  'image/jpeg': [0xff, 0xd8, 0xff, 0xe0],
  'application/pdf': '%PDF-1.7\n',
  'video/mp4': [0, 0, 0, 0x18, ...'ftypmp42'].map((c) => (typeof c === 'string' ? c.charCodeAt(0) : c)),
}

/** `testBytes`, starting as a file of `type` does when that type has a known signature. */
export function testBytesOf(type: string, size: number, seed = 1): Uint8Array<ArrayBuffer> {
  const bytes = testBytes(size, seed)
  const signature = FILE_SIGNATURES[type.toLowerCase()]
  const head = typeof signature === 'string' ? new TextEncoder().encode(signature) : signature
  if (head && head.length <= size) bytes.set(head)
  return bytes
}
