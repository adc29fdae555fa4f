// Byte helpers for the headers that carry an MD5 (SSE-C's key MD5, PutObjectTagging's Content-MD5):
// internal to the opt-ins, not part of any public entry.

/** Standard base64 of raw bytes (short inputs: a key, a digest, a tagging document). */
export const toBase64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes))

/** Per-step left rotations, RFC 1321 3.4: four per round, each used four times in its round. */
const SHIFTS = [7, 12, 17, 22, 5, 9, 14, 20, 4, 11, 16, 23, 6, 10, 15, 21]

/** RFC 1321 3.4's table: floor(abs(sin(i + 1)) * 2^32), exact in IEEE doubles. */
const SINES = Array.from({ length: 64 }, (_, i) => Math.floor(Math.abs(Math.sin(i + 1)) * 2 ** 32))

/**
 * MD5 (RFC 1321), which SSE-C needs and WebCrypto lacks. Written for size, not speed: it hashes
 * one 32-byte key per upload.
 */
export function md5(bytes: Uint8Array): Uint8Array {
  // Padding (3.1, 3.2): a 1 bit, zeros up to 56 mod 64 bytes, then the bit length, little-endian.
  const padded = new Uint8Array((((bytes.length + 8) >> 6) + 1) * 64)
  padded.set(bytes)
  padded[bytes.length] = 0x80
  const view = new DataView(padded.buffer)
  view.setUint32(padded.length - 8, bytes.length * 8, true)
  view.setUint32(padded.length - 4, bytes.length / 2 ** 29, true)

  const state = [0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476]
  for (let block = 0; block < padded.length; block += 64) {
    let [a, b, c, d] = state as [number, number, number, number]
    for (let i = 0; i < 64; i++) {
      const round = i >> 4
      // F, G, H, I and the message word each round takes (3.4).
      const mixed =
        round === 0 ? (b & c) | (~b & d) : round === 1 ? (d & b) | (~d & c) : round === 2 ? b ^ c ^ d : c ^ (b | ~d)
      const word = [i, 5 * i + 1, 3 * i + 5, 7 * i][round]! % 16
      const sum = (a + mixed + SINES[i]! + view.getUint32(block + word * 4, true)) | 0
      const shift = SHIFTS[round * 4 + (i % 4)]!
      ;[a, d, c, b] = [d, c, b, (b + ((sum << shift) | (sum >>> (32 - shift)))) | 0]
    }
    state[0] = (state[0]! + a) | 0
    state[1] = (state[1]! + b) | 0
    state[2] = (state[2]! + c) | 0
    state[3] = (state[3]! + d) | 0
  }
  const digest = new DataView(new ArrayBuffer(16))
  state.forEach((word, i) => digest.setUint32(i * 4, word, true))
  return new Uint8Array(digest.buffer)
}
