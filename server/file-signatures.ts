/**
 * File signatures ("magic numbers") of the common types a page uploads for others to view, where
 * a lie matters most: an HTML page declared `image/png` is served as PNG today, and as HTML by
 * anything that sniffs. Sources: the PNG spec (§5.2), JFIF/EXIF SOI marker, GIF89a spec, RIFF/WebP
 * container spec, ISO/IEC 14496-12 (`ftyp` box at offset 4: MP4, QuickTime, AVIF, HEIC), the PDF
 * spec (§7.5.2 header), TIFF 6.0 header, BMP file header, the EBML header of Matroska/WebM.
 */
import { SIGNATURE_BYTES } from '../protocol/limits.ts'

type Check = (bytes: Uint8Array) => boolean

const at = (offset: number, ...expected: Array<number | string>): Check => {
  const want = expected.flatMap((part) => (typeof part === 'string' ? [...part].map((c) => c.charCodeAt(0)) : [part]))
  return (bytes) => want.every((byte, i) => bytes[offset + i] === byte)
}
const either =
  (...checks: Check[]): Check =>
  (bytes) =>
    checks.some((check) => check(bytes))
const both =
  (...checks: Check[]): Check =>
  (bytes) =>
    checks.every((check) => check(bytes))

const isoMedia = at(4, 'ftyp')

/** Type essence → what its first SIGNATURE_BYTES must look like. */
const SIGNATURES: Record<string, Check> = {
  'image/png': at(0, 0x89, 'PNG', 0x0d, 0x0a, 0x1a, 0x0a),
  'image/jpeg': at(0, 0xff, 0xd8, 0xff),
  'image/gif': either(at(0, 'GIF87a'), at(0, 'GIF89a')),
  'image/webp': both(at(0, 'RIFF'), at(8, 'WEBP')),
  'image/avif': isoMedia,
  'image/heic': isoMedia,
  'image/bmp': at(0, 'BM'),
  'image/tiff': either(at(0, 'II', 42, 0), at(0, 'MM', 0, 42)),
  'application/pdf': at(0, '%PDF-'),
  'video/mp4': isoMedia,
  'video/quicktime': isoMedia,
  'video/webm': at(0, 0x1a, 0x45, 0xdf, 0xa3),
}

/** Whether the server knows what files of this type (`type/subtype`, lower-case) start with. */
export const hasFileSignature = (essence: string): boolean => essence in SIGNATURES

/** Whether `firstBytes` (at least the first SIGNATURE_BYTES of the object, or all of a shorter one) start as `essence` files do. */
export function matchesFileSignature(essence: string, firstBytes: Uint8Array): boolean {
  const check = SIGNATURES[essence]
  return !check || check(firstBytes.subarray(0, SIGNATURE_BYTES))
}
