import { md5, toBase64 } from '../md5.ts'
import { CRC32, CRC32C, crc } from './crc.ts'

/** The checksums S3 takes: `x-amz-checksum-crc32`, `-crc32c`, `-sha256`, or `Content-MD5`. */
export type ChecksumAlgorithm = 'crc32' | 'crc32c' | 'sha256' | 'md5'

export const CHECKSUM_ALGORITHMS: readonly ChecksumAlgorithm[] = ['crc32', 'crc32c', 'sha256', 'md5']

/** The binary digest of `bytes`: 4 bytes big-endian for the CRCs (as S3 encodes them), 32 for SHA-256, 16 for MD5. */
export async function digest(algorithm: ChecksumAlgorithm, bytes: Uint8Array): Promise<Uint8Array> {
  if (algorithm === 'sha256') return new Uint8Array(await crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>))
  if (algorithm === 'md5') return md5(bytes)
  const value = crc(algorithm === 'crc32' ? CRC32 : CRC32C, bytes)
  const out = new Uint8Array(4)
  new DataView(out.buffer).setUint32(0, value)
  return out
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
