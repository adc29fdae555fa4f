// What to do with one image, decided without touching its pixels: its options checked once, the
// box it must fit, the type it is written as, its new name, and the files that go as they are.

/** The types an image can be written as. */
export type ImageType = 'image/jpeg' | 'image/webp' | 'image/png'

/** Options of `shrinkImage` and `shrinkImages` (`updraft-s3/images`). */
export interface ShrinkImageOptions {
  /** Widest the image may be, in pixels, after its EXIF orientation is applied. @default 2048 */
  maxWidth?: number
  /** Tallest the image may be, in pixels, after its EXIF orientation is applied. @default 2048 */
  maxHeight?: number
  /** Encoder quality for JPEG and WebP, over 0 and at most 1; PNG ignores it. @default 0.8 */
  quality?: number
  /**
   * The type to write. `image/webp` where the browser can encode it, else JPEG (a PNG asked for
   * WebP stays PNG, keeping its transparency). @default the image's own: JPEG stays JPEG, PNG
   * stays PNG, WebP stays WebP; any other image the browser decodes (BMP, AVIF…) becomes JPEG
   */
  type?: ImageType
}

/** The options with every default filled in. */
export type ShrinkPlan = Required<ShrinkImageOptions>

export const SHRINK_DEFAULTS: ShrinkPlan = { maxWidth: 2048, maxHeight: 2048, quality: 0.8, type: 'image/jpeg' }

const TYPES: readonly string[] = ['image/jpeg', 'image/webp', 'image/png']

/** Checked once, where the options are given: a bad one is a programming error, said with its value. */
export function shrinkPlan(options: ShrinkImageOptions = {}): Omit<ShrinkPlan, 'type'> & { type?: ImageType } {
  const {
    maxWidth = SHRINK_DEFAULTS.maxWidth,
    maxHeight = SHRINK_DEFAULTS.maxHeight,
    quality = SHRINK_DEFAULTS.quality,
    type,
  } = options
  for (const [name, value] of [
    ['maxWidth', maxWidth],
    ['maxHeight', maxHeight],
  ] as const) {
    if (!Number.isInteger(value) || value < 1)
      throw new TypeError(`updraft: ${name} must be a whole number of pixels, at least 1, got ${String(value)}`)
  }
  if (typeof quality !== 'number' || !(quality > 0 && quality <= 1))
    throw new TypeError(`updraft: quality must be over 0 and at most 1, got ${String(quality)}`)
  if (type !== undefined && !TYPES.includes(type))
    throw new TypeError(`updraft: type must be one of ${TYPES.join(', ')}, got ${String(type)}`)
  return { maxWidth, maxHeight, quality, type }
}

/**
 * The size that fits `width` × `height` within the box, keeping the aspect ratio (each side at
 * least 1 px); the image's own size when it already fits. Self-contained: the worker runs it from
 * its text (shrink.ts).
 */
export function fitWithin(
  width: number,
  height: number,
  maxWidth: number,
  maxHeight: number,
): { width: number; height: number } {
  const scale = Math.min(1, maxWidth / width, maxHeight / height)
  if (scale === 1) return { width, height }
  return {
    width: Math.max(1, Math.min(maxWidth, Math.round(width * scale))),
    height: Math.max(1, Math.min(maxHeight, Math.round(height * scale))),
  }
}

/** The type an image of `source` type is written as: the one asked for, else its own (JPEG for the types no canvas writes). */
export const outputType = (source: string, asked: ImageType | undefined): ImageType =>
  asked ?? (source === 'image/png' || source === 'image/webp' ? source : 'image/jpeg')

/**
 * What to write when the browser cannot write `wanted` (its canvas answers a PNG for a type it does
 * not encode; Safari has no WebP encoder): a PNG source stays PNG, keeping its transparency.
 */
export const fallbackType = (source: string): ImageType => (source === 'image/png' ? 'image/png' : 'image/jpeg')

/**
 * Files not worth decoding: anything but an image, GIF (often animated: a canvas keeps only its
 * first frame), SVG (vector: a canvas would turn it into pixels, larger and blurred).
 */
export const passesUnchanged = (type: string): boolean =>
  !type.startsWith('image/') || type === 'image/gif' || type === 'image/svg+xml'

/** Bytes of a file's start read to tell an animated PNG or WebP: APNG's acTL comes before the first IDAT. */
export const HEAD_BYTES = 64 * 1024

/**
 * Whether the image is animated, from its first bytes: an APNG (an `acTL` chunk before `IDAT`,
 * APNG spec) or an animated WebP (VP8X with the animation flag, RIFF WebP container spec). A canvas
 * keeps one frame of either, so they go as they are.
 */
export function isAnimated(type: string, head: Uint8Array): boolean {
  const text = (at: number, length: number) => String.fromCharCode(...head.subarray(at, at + length))
  if (type === 'image/webp') return text(12, 4) === 'VP8X' && ((head[20] ?? 0) & 0x02) !== 0
  if (type !== 'image/png') return false
  const view = new DataView(head.buffer, head.byteOffset, head.byteLength)
  // Chunks after the 8-byte signature: length (4), type (4), data, CRC (4).
  for (let at = 8; at + 8 <= head.byteLength; ) {
    const chunk = text(at + 4, 4)
    if (chunk === 'acTL') return true
    if (chunk === 'IDAT') return false
    at += 12 + view.getUint32(at)
  }
  return false
}

const EXTENSIONS: Record<ImageType, string> = { 'image/jpeg': '.jpg', 'image/webp': '.webp', 'image/png': '.png' }
const SAME_TYPE: Record<ImageType, RegExp> = {
  'image/jpeg': /\.(jpe?g|jfif)$/i,
  'image/webp': /\.webp$/i,
  'image/png': /\.png$/i,
}

/** `name` for a file now of `type`: kept when its extension already says that type, else the extension replaced (or added). */
export function renamed(name: string, type: ImageType): string {
  if (SAME_TYPE[type].test(name)) return name
  const dot = name.lastIndexOf('.')
  const base = dot > 0 ? name.slice(0, dot) : name
  return base + EXTENSIONS[type]
}
