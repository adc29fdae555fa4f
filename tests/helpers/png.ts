import { crc32, deflateSync } from 'node:zlib'

/**
 * A real PNG (8-bit RGB, a diagonal gradient) built byte by byte, so browser tests can give the
 * page an image it decodes: chunks per https://www.w3.org/TR/png-3/#5Chunk-layout.
 */
export function gradientPng(width: number, height: number): Buffer {
  const rows = Buffer.alloc((width * 3 + 1) * height)
  for (let y = 0; y < height; y++) {
    const row = y * (width * 3 + 1) // each row starts with filter type 0 (none)
    for (let x = 0; x < width; x++) {
      rows[row + 1 + x * 3] = Math.round((255 * x) / width)
      rows[row + 2 + x * 3] = Math.round((255 * y) / height)
      rows[row + 3 + x * 3] = 160
    }
  }
  const header = Buffer.alloc(13)
  header.writeUInt32BE(width, 0)
  header.writeUInt32BE(height, 4)
  header.set([8, 2, 0, 0, 0], 8) // bit depth 8, colour type 2 (RGB), deflate, no filter method, no interlace
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(rows)),
    chunk('IEND', Buffer.alloc(0)),
  ])
}

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4)
  length.writeUInt32BE(data.length)
  const typed = Buffer.concat([Buffer.from(type, 'ascii'), data])
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(typed))
  return Buffer.concat([length, typed, crc])
}
