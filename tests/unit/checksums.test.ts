// The checksum opt-in's hashing against known vectors and against Node's own zlib and crypto.
import { createHash } from 'node:crypto'
import { crc32 as zlibCrc32 } from 'node:zlib'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { CRC32, CRC32C, crc } from '../../engine/opt-ins/checksums/crc.ts'
import { compositeChecksum, digest, toHex } from '../../engine/opt-ins/checksums/digest.ts'
import { checksum } from '../../engine/opt-ins/checksums/index.ts'

const ascii = (text: string) => new TextEncoder().encode(text)
const base64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64')
const bytesArb = fc.uint8Array({ maxLength: 3000 })

describe('CRC32 and CRC32C (slicing-by-8)', () => {
  it('gives the catalogued check values of "123456789" (CRC-32/ISO-HDLC 0xCBF43926, CRC-32C 0xE3069283)', () => {
    expect(crc(CRC32, ascii('123456789'))).toBe(0xcbf43926)
    expect(crc(CRC32C, ascii('123456789'))).toBe(0xe3069283)
    expect(crc(CRC32, new Uint8Array())).toBe(0)
    expect(crc(CRC32C, new Uint8Array())).toBe(0)
  })

  it("gives RFC 3720 B.4's CRC32C vectors (32 zero bytes, 32 0xFF bytes, 0..31)", () => {
    expect(crc(CRC32C, new Uint8Array(32))).toBe(0x8a9136aa)
    expect(crc(CRC32C, new Uint8Array(32).fill(0xff))).toBe(0x62a8ab43)
    expect(
      crc(
        CRC32C,
        Uint8Array.from({ length: 32 }, (_, i) => i),
      ),
    ).toBe(0x46dd794e)
  })

  it('equals node:zlib crc32 on any bytes, at any split (each length mod 8 takes the byte tail)', () => {
    fc.assert(
      fc.property(bytesArb, fc.nat(), (bytes, at) => {
        const split = bytes.length ? at % bytes.length : 0
        expect(crc(CRC32, bytes)).toBe(zlibCrc32(bytes))
        expect(crc(CRC32, bytes.subarray(split), crc(CRC32, bytes.subarray(0, split)))).toBe(zlibCrc32(bytes))
      }),
    )
  })

  it('CRC32C continued across a split equals the CRC32C of the whole', () => {
    fc.assert(
      fc.property(bytesArb, fc.nat(), (bytes, at) => {
        const split = bytes.length ? at % bytes.length : 0
        expect(crc(CRC32C, bytes.subarray(split), crc(CRC32C, bytes.subarray(0, split)))).toBe(crc(CRC32C, bytes))
      }),
    )
  })
})

describe('digest', () => {
  it('CRCs as 4 bytes big-endian, the form S3 base64-encodes ("123456789": CRC32C 4waSgw==)', async () => {
    expect(base64(await digest('crc32c', ascii('123456789')))).toBe('4waSgw==')
    expect(base64(await digest('crc32', ascii('123456789')))).toBe('y/Q5Jg==')
  })

  it('SHA-256 and MD5 equal node:crypto on any bytes', async () => {
    await fc.assert(
      fc.asyncProperty(bytesArb, async (bytes) => {
        expect(base64(await digest('sha256', bytes))).toBe(createHash('sha256').update(bytes).digest('base64'))
        expect(base64(await digest('md5', bytes))).toBe(createHash('md5').update(bytes).digest('base64'))
      }),
    )
  })

  it('every algorithm on a large view into a bigger buffer (whole blocks read in place, at an odd offset)', async () => {
    const buffer = new Uint8Array(3 * 1024 * 1024 + 100)
    for (let i = 0; i < buffer.length; i++) buffer[i] = (i * 2654435761) >>> 24
    const view = buffer.subarray(37, 37 + 3 * 1024 * 1024 + 13)
    expect(base64(await digest('md5', view))).toBe(createHash('md5').update(view).digest('base64'))
    expect(base64(await digest('sha256', view))).toBe(createHash('sha256').update(view).digest('base64'))
    expect(crc(CRC32, view)).toBe(zlibCrc32(view))
  })

  it('MD5 of the empty input and of "abc" (RFC 1321 A.5)', async () => {
    expect(toHex(await digest('md5', new Uint8Array()))).toBe('d41d8cd98f00b204e9800998ecf8427e')
    expect(toHex(await digest('md5', ascii('abc')))).toBe('900150983cd24fb0d6963f7d28e17f72')
  })
})

describe('compositeChecksum', () => {
  it('is the digest of the concatenated part digests, then -N (base64; hex for MD5, the multipart ETag)', async () => {
    const parts = [ascii('first part'), ascii('second'), ascii('3')]
    for (const algorithm of ['crc32', 'crc32c', 'sha256'] as const) {
      const digests = await Promise.all(parts.map((part) => digest(algorithm, part)))
      const joined = Buffer.concat(digests)
      const expected =
        algorithm === 'sha256'
          ? createHash('sha256').update(joined).digest('base64')
          : base64(await digest(algorithm, new Uint8Array(joined)))
      expect(await compositeChecksum(algorithm, digests)).toBe(`${expected}-3`)
    }
    const md5s = parts.map((part) => createHash('md5').update(part).digest())
    expect(await compositeChecksum('md5', md5s)).toBe(
      `${createHash('md5').update(Buffer.concat(md5s)).digest('hex')}-3`,
    )
  })

  it('CRC32 composite of two parts equals zlib crc32 of the 8 joined digest bytes', async () => {
    const digests = [Buffer.from('AAAAAA==', 'base64'), Buffer.from('/////w==', 'base64')]
    const joined = Buffer.concat(digests)
    const value = Buffer.alloc(4)
    value.writeUInt32BE(zlibCrc32(joined))
    expect(await compositeChecksum('crc32', digests)).toBe(`${value.toString('base64')}-2`)
  })
})

describe('checksum() refuses what the target cannot carry', () => {
  it('a directory bucket gets no MD5 (S3 Express One Zone takes none); crc32c is fine there, md5 elsewhere', () => {
    const md5 = checksum('md5').checksum!
    expect(() => md5({ bucket: 'uploads--use1-az4--x-s3' })).toThrow(
      /directory buckets .* take no MD5 checksums: use checksum\('crc32c'\)/,
    )
    expect(() => md5({ bucket: 'uploads' })).not.toThrow()
    expect(() => checksum('crc32c').checksum!({ bucket: 'uploads--use1-az4--x-s3' })).not.toThrow()
  })
})
