import { md5, toBase64 } from '../md5.ts'
import { crc } from './crc.ts'

/** The checksums S3 takes: `x-amz-checksum-crc32`, `-crc32c`, `-sha256`, or `Content-MD5`. */
export type ChecksumAlgorithm = 'crc32' | 'crc32c' | 'sha256' | 'md5'

export const CHECKSUM_ALGORITHMS: readonly ChecksumAlgorithm[] = ['crc32', 'crc32c', 'sha256', 'md5']

/** The binary digest of `bytes`: 4 bytes big-endian for the CRCs (as S3 encodes them), 32 for SHA-256, 16 for MD5. */
export const digest = (algorithm: ChecksumAlgorithm, bytes: Uint8Array): Promise<Uint8Array> =>
  digestWith(crc, md5, algorithm, bytes)

/**
 * {@link digest} with its hash functions passed in: self-contained (no names from outside but
 * built-ins, no async syntax a bundler could turn into a helper call), so the hashing worker runs
 * it from its source text, given `crc` and `md5` the same way (hash-worker.ts).
 */
export function digestWith(
  crcOf: typeof crc,
  md5Of: typeof md5,
  algorithm: ChecksumAlgorithm,
  bytes: Uint8Array,
): Promise<Uint8Array> {
  if (algorithm === 'sha256')
    return crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>).then((hash) => new Uint8Array(hash))
  if (algorithm === 'md5') return Promise.resolve(md5Of(bytes))
  // CRC32's and CRC32C's reversed polynomials (crc.ts), written out: this text runs alone in the worker.
  const value = crcOf(algorithm === 'crc32' ? 0xedb88320 : 0x82f63b78, bytes)
  const out = new Uint8Array(4)
  new DataView(out.buffer).setUint32(0, value)
  return Promise.resolve(out)
}

/**
 * The checksum S3 gives a multipart object: the digest of the parts' binary digests, concatenated
 * in part order, with `-{part count}` after it (S3's "composite" checksum type; for MD5 it is the
 * multipart ETag, in hex). Base64 for the `x-amz-checksum-*` algorithms, as S3 writes them.
 */
export async function compositeChecksum(algorithm: ChecksumAlgorithm, parts: readonly Uint8Array[]): Promise<string> {
  const joined = new Uint8Array(parts.reduce((total, part) => total + part.length, 0))
  parts.reduce((offset, part) => (joined.set(part, offset), offset + part.length), 0)
  const combined = await digest(algorithm, joined)
  return `${algorithm === 'md5' ? toHex(combined) : toBase64(combined)}-${parts.length}`
}

export const toHex = (bytes: Uint8Array) => Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('')
