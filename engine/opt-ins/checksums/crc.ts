// CRC32 and CRC32C, the two CRCs S3's `x-amz-checksum-*` headers carry. Both are reflected CRCs
// (init and final XOR 0xFFFFFFFF) that differ only in the polynomial, so one routine serves both.

/** CRC-32 (ISO-HDLC, zlib's), reversed polynomial. */
export const CRC32 = 0xedb88320
/** CRC-32C (Castagnoli, iSCSI's), reversed polynomial. */
export const CRC32C = 0x82f63b78

/**
 * The CRC of `bytes` for a reversed `polynomial` ({@link CRC32} or {@link CRC32C}), continuing
 * from `previous` (the CRC of the bytes before; 0 to start), as an unsigned 32-bit number.
 * Self-contained (it names nothing outside itself but built-ins): the hashing worker runs it from
 * its source text (hash-worker.ts).
 */
export function crc(polynomial: number, bytes: Uint8Array, previous = 0): number {
  // Slicing-by-8 tables (Intel's "slicing-by-8" paper): table k gives the CRC of a byte followed by
  // k zero bytes, so eight bytes fold in at once. 8 KiB, built per call (a few microseconds, next
  // to the milliseconds a part takes), so no state outlives the call.
  const t = new Uint32Array(8 * 256)
  for (let byte = 0; byte < 256; byte++) {
    let value = byte
    for (let bit = 0; bit < 8; bit++) value = value & 1 ? (value >>> 1) ^ polynomial : value >>> 1
    t[byte] = value
  }
  for (let i = 256; i < t.length; i++) t[i] = (t[i - 256]! >>> 8) ^ t[t[i - 256]! & 0xff]!

  let c = ~previous
  let i = 0
  for (const whole = bytes.length - 7; i < whole; i += 8) {
    const low = c ^ (bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24))
    c =
      t[1792 + (low & 0xff)]! ^
      t[1536 + ((low >>> 8) & 0xff)]! ^
      t[1280 + ((low >>> 16) & 0xff)]! ^
      t[1024 + (low >>> 24)]! ^
      t[768 + bytes[i + 4]!]! ^
      t[512 + bytes[i + 5]!]! ^
      t[256 + bytes[i + 6]!]! ^
      t[bytes[i + 7]!]!
  }
  for (; i < bytes.length; i++) c = t[(c ^ bytes[i]!) & 0xff]! ^ (c >>> 8)
  return ~c >>> 0
}
