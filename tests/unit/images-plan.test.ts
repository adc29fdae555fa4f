// The pure half of updraft-s3/images: the box an image must fit, the type it is written as, its
// new name, the files that go unchanged, and the options checked where they are given. The pixels
// (decode, draw, encode in a worker) are tested in real browsers: images-browser.test.ts.
import { describe, expect, it } from 'vitest'
import { shrinkImage, shrinkImages } from '../../engine/opt-ins/images/index.ts'
import {
  fallbackType,
  fitWithin,
  isAnimated,
  outputType,
  passesUnchanged,
  renamed,
  shrinkPlan,
} from '../../engine/opt-ins/images/plan.ts'

describe('fitWithin', () => {
  it('scales a 4000×3000 landscape and a 3000×4000 portrait into 2048², keeping the aspect', () => {
    expect(fitWithin(4000, 3000, 2048, 2048)).toEqual({ width: 2048, height: 1536 })
    expect(fitWithin(3000, 4000, 2048, 2048)).toEqual({ width: 1536, height: 2048 })
  })

  it('takes the tighter side of a box that is not square', () => {
    expect(fitWithin(4000, 3000, 1000, 2000)).toEqual({ width: 1000, height: 750 })
    expect(fitWithin(4000, 3000, 2000, 600)).toEqual({ width: 800, height: 600 })
  })

  it('leaves an image that fits as it is (never enlarged), and never makes a side 0 or over the box', () => {
    expect(fitWithin(800, 600, 2048, 2048)).toEqual({ width: 800, height: 600 })
    expect(fitWithin(2048, 10, 2048, 2048)).toEqual({ width: 2048, height: 10 })
    expect(fitWithin(100_000, 10, 1000, 1000)).toEqual({ width: 1000, height: 1 })
    for (const [width, height] of [
      [4001, 2999],
      [3333, 4097],
      [2049, 2049],
    ]) {
      const fitted = fitWithin(width!, height!, 2048, 2048)
      expect(Math.max(fitted.width, fitted.height)).toBeLessThanOrEqual(2048)
    }
  })
})

describe('the type written', () => {
  it('keeps JPEG, PNG and WebP as they are; any other decodable image becomes JPEG; an asked type wins', () => {
    expect(outputType('image/jpeg', undefined)).toBe('image/jpeg')
    expect(outputType('image/png', undefined)).toBe('image/png')
    expect(outputType('image/webp', undefined)).toBe('image/webp')
    expect(outputType('image/bmp', undefined)).toBe('image/jpeg')
    expect(outputType('image/png', 'image/webp')).toBe('image/webp')
    expect(outputType('image/jpeg', 'image/webp')).toBe('image/webp')
  })

  it('falls back to PNG for a PNG (its transparency kept) and to JPEG for anything else', () => {
    expect(fallbackType('image/png')).toBe('image/png')
    expect(fallbackType('image/jpeg')).toBe('image/jpeg')
    expect(fallbackType('image/webp')).toBe('image/jpeg')
  })

  it('sends GIF, SVG and what is not an image without decoding them', () => {
    for (const type of ['image/gif', 'image/svg+xml', 'application/pdf', 'text/plain', ''])
      expect(passesUnchanged(type), type).toBe(true)
    for (const type of ['image/jpeg', 'image/png', 'image/webp', 'image/heic', 'image/bmp'])
      expect(passesUnchanged(type), type).toBe(false)
  })
})

describe('renamed', () => {
  it('keeps a name whose extension already says the type, and replaces or adds one otherwise', () => {
    expect(renamed('IMG_0001.JPG', 'image/jpeg')).toBe('IMG_0001.JPG')
    expect(renamed('photo.jpeg', 'image/jpeg')).toBe('photo.jpeg')
    expect(renamed('drawing.png', 'image/webp')).toBe('drawing.webp')
    expect(renamed('scan.bmp', 'image/jpeg')).toBe('scan.jpg')
    expect(renamed('archive.tar.png', 'image/webp')).toBe('archive.tar.webp')
    expect(renamed('noextension', 'image/png')).toBe('noextension.png')
    expect(renamed('.hidden', 'image/jpeg')).toBe('.hidden.jpg')
  })
})

/** A PNG's chunk: length, type, data, a CRC left zero (nothing here checks it). */
const chunk = (type: string, data = new Uint8Array(0)) => {
  const bytes = new Uint8Array(12 + data.length)
  new DataView(bytes.buffer).setUint32(0, data.length)
  bytes.set(
    [...type].map((c) => c.charCodeAt(0)),
    4,
  )
  bytes.set(data, 8)
  return bytes
}
const png = (...chunks: Uint8Array[]) =>
  new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, ...chunks.flatMap((c) => [...c])])
const webp = (flags: number) =>
  new Uint8Array(
    [...'RIFF']
      .map((c) => c.charCodeAt(0))
      .concat(
        [0, 0, 0, 0],
        [...'WEBPVP8X'].map((c) => c.charCodeAt(0)),
        [10, 0, 0, 0, flags, 0, 0, 0],
      ),
  )

describe('isAnimated', () => {
  it('tells an APNG (acTL before IDAT, after other chunks) from a still PNG', () => {
    expect(
      isAnimated(
        'image/png',
        png(
          chunk('IHDR', new Uint8Array(13)),
          chunk('iCCP', new Uint8Array(300)),
          chunk('acTL', new Uint8Array(8)),
          chunk('IDAT'),
        ),
      ),
    ).toBe(true)
    expect(
      isAnimated('image/png', png(chunk('IHDR', new Uint8Array(13)), chunk('IDAT'), chunk('acTL', new Uint8Array(8)))),
    ).toBe(false)
    expect(isAnimated('image/png', png(chunk('IHDR', new Uint8Array(13))))).toBe(false)
  })

  it('tells an animated WebP (VP8X animation flag) from a still one, and reads nothing of other types', () => {
    expect(isAnimated('image/webp', webp(0x02))).toBe(true)
    expect(isAnimated('image/webp', webp(0x10))).toBe(false)
    expect(isAnimated('image/jpeg', png(chunk('acTL')))).toBe(false)
  })
})

describe('options', () => {
  it('fills the defaults: 2048² at quality 0.8, the type left to each image', () => {
    expect(shrinkPlan()).toEqual({ maxWidth: 2048, maxHeight: 2048, quality: 0.8, type: undefined })
  })

  it('refuses a bad option where it is given, naming it and its value', () => {
    expect(() => shrinkImages({ maxWidth: 0 })).toThrow(
      new TypeError('updraft: maxWidth must be a whole number of pixels, at least 1, got 0'),
    )
    expect(() => shrinkImages({ maxHeight: 10.5 })).toThrow(/maxHeight .* got 10\.5/)
    expect(() => shrinkImages({ quality: 1.5 })).toThrow(
      new TypeError('updraft: quality must be over 0 and at most 1, got 1.5'),
    )
    expect(() => shrinkImages({ quality: 0 })).toThrow(/quality/)
    expect(() => shrinkImages({ type: 'image/gif' as never })).toThrow(
      /type must be one of image\/jpeg, image\/webp, image\/png, got image\/gif/,
    )
  })

  it('in Node (no image decoder) gives every file back unchanged, the same object', async () => {
    const photo = new File([new Uint8Array([0xff, 0xd8, 0xff, 0xe0])], 'photo.jpg', { type: 'image/jpeg' })
    expect(await shrinkImage(photo)).toBe(photo)
  })
})
