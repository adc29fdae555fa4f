// Byte helpers for the headers that carry an MD5 (SSE-C's key MD5, PutObjectTagging's Content-MD5,
// the checksum opt-in's per-part Content-MD5): internal to the opt-ins, not part of any public entry.

/** Standard base64 of raw bytes (short inputs: a key, a digest, a tagging document). */
export const toBase64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes))

/**
 * MD5 (RFC 1321), which SSE-C and Content-MD5 need and WebCrypto lacks. Whole parts go through it
 * (updraft-s3/checksums): whole blocks are read in place, only the tail is copied to be padded.
 * Self-contained (it names nothing outside itself but built-ins): updraft-s3/checksums' hashing worker
 * runs it from its source text. Its tables take about a microsecond to build per call.
 */
export function md5(bytes: Uint8Array): Uint8Array {
  // Per-step left rotations, RFC 1321 3.4: four per round, each used four times in its round.
  const SHIFTS = [7, 12, 17, 22, 5, 9, 14, 20, 4, 11, 16, 23, 6, 10, 15, 21]
  // RFC 1321 3.4's table: floor(abs(sin(i + 1)) * 2^32), exact in IEEE doubles.
  const SINES = Int32Array.from({ length: 64 }, (_, i) => Math.floor(Math.abs(Math.sin(i + 1)) * 2 ** 32))
  // Per step: its rotation, and the message word it takes (3.4).
  const SHIFT = Int32Array.from({ length: 64 }, (_, i) => SHIFTS[(i >> 4) * 4 + (i % 4)]!)
  const WORD = Int32Array.from({ length: 64 }, (_, i) => [i, 5 * i + 1, 3 * i + 5, 7 * i][i >> 4]! % 16)

  // Padding (3.1, 3.2): a 1 bit, zeros up to 56 mod 64 bytes, then the bit length, little-endian.
  const whole = bytes.length & ~63
  const tail = new Uint8Array(bytes.length - whole < 56 ? 64 : 128)
  tail.set(bytes.subarray(whole))
  tail[bytes.length - whole] = 0x80
  const tailView = new DataView(tail.buffer)
  tailView.setUint32(tail.length - 8, bytes.length * 8, true)
  tailView.setUint32(tail.length - 4, bytes.length / 2 ** 29, true)

  const state = Int32Array.of(0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476)
  const words = new Int32Array(16)
  const blocks = (view: DataView, end: number) => {
    for (let block = 0; block < end; block += 64) {
      for (let j = 0; j < 16; j++) words[j] = view.getInt32(block + j * 4, true)
      let a = state[0]!
      let b = state[1]!
      let c = state[2]!
      let d = state[3]!
      let sum: number
      let i = 0
      // A loop per round with its own F, G, H or I (3.4), written out: no branch per step. In Node here
      // one loop choosing the function per step hashed 83 MB/s, a step closure 67, these loops ~190-300.
      for (; i < 16; i++) {
        sum = (a + (d ^ (b & (c ^ d))) + SINES[i]! + words[WORD[i]!]!) | 0
        a = d
        d = c
        c = b
        b = (b + ((sum << SHIFT[i]!) | (sum >>> (32 - SHIFT[i]!)))) | 0
      }
      for (; i < 32; i++) {
        sum = (a + (c ^ (d & (b ^ c))) + SINES[i]! + words[WORD[i]!]!) | 0
        a = d
        d = c
        c = b
        b = (b + ((sum << SHIFT[i]!) | (sum >>> (32 - SHIFT[i]!)))) | 0
      }
      for (; i < 48; i++) {
        sum = (a + (b ^ c ^ d) + SINES[i]! + words[WORD[i]!]!) | 0
        a = d
        d = c
        c = b
        b = (b + ((sum << SHIFT[i]!) | (sum >>> (32 - SHIFT[i]!)))) | 0
      }
      for (; i < 64; i++) {
        sum = (a + (c ^ (b | ~d)) + SINES[i]! + words[WORD[i]!]!) | 0
        a = d
        d = c
        c = b
        b = (b + ((sum << SHIFT[i]!) | (sum >>> (32 - SHIFT[i]!)))) | 0
      }
      state[0] = (state[0]! + a) | 0
      state[1] = (state[1]! + b) | 0
      state[2] = (state[2]! + c) | 0
      state[3] = (state[3]! + d) | 0
    }
  }
  blocks(new DataView(bytes.buffer, bytes.byteOffset, bytes.length), whole)
  blocks(tailView, tail.length)
  const digest = new DataView(new ArrayBuffer(16))
  state.forEach((word, i) => {
    digest.setUint32(i * 4, word, true)
  })
  return new Uint8Array(digest.buffer)
}
