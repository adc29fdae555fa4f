/**
 * Installs `window.makePhoto(width, height, quality, orientation?)` in a page: a photo-like JPEG made
 * in a canvas — four coloured quadrants (top left red, top right green, bottom left blue, bottom
 * right grey: no two corners alike, so a turn shows) under fine noise that JPEG must spend bytes on,
 * as on a phone photo's sky and skin — and, given an `orientation`, an APP1 Exif segment whose one
 * IFD0 entry is Orientation (0x0112, SHORT) = that value (TIFF 6.0 / Exif 2.3, big-endian), after the
 * canvas's APP0 where cameras put theirs. For images-browser.test.ts and bench/images.ts. Pass it to
 * `page.evaluate` as it is: it names nothing outside itself.
 */
// No function is bound to a name inside: tsx (keepNames) would wrap it in a `__name` call the page lacks.
export function installPhotoMaker(): void {
  ;(window as unknown as { makePhoto: MakePhoto }).makePhoto = async (width, height, quality, orientation) => {
    const canvas = Object.assign(document.createElement('canvas'), { width, height })
    const context = canvas.getContext('2d')!
    const image = context.createImageData(width, height)
    const data = image.data
    let seed = 12345
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        seed = (seed * 1103515245 + 12345) & 0x7fffffff
        const noise = (seed >> 16) & 31
        const top = y < height / 2
        const left = x < width / 2
        const [r, g, b] = top ? (left ? [230, 20, 20] : [20, 200, 20]) : left ? [20, 20, 230] : [128, 128, 128]
        const at = (y * width + x) * 4
        data[at] = Math.min(255, r! + noise)
        data[at + 1] = Math.min(255, g! + noise)
        data[at + 2] = Math.min(255, b! + noise)
        data[at + 3] = 255
      }
    }
    context.putImageData(image, 0, 0)
    const jpeg = await new Promise<Blob>((resolve) => canvas.toBlob((blob) => resolve(blob!), 'image/jpeg', quality))
    if (!orientation) return jpeg
    const bytes = new Uint8Array(await jpeg.arrayBuffer())
    const app0 = bytes[3] === 0xe0 ? 4 + ((bytes[4]! << 8) | bytes[5]!) : 2
    const exif = [
      0xff,
      0xe1,
      0,
      34,
      0x45,
      0x78,
      0x69,
      0x66,
      0,
      0,
      0x4d,
      0x4d,
      0,
      0x2a,
      0,
      0,
      0,
      8,
      0,
      1,
      0x01,
      0x12,
      0,
      3,
      0,
      0,
      0,
      1,
      0,
      orientation,
      0,
      0,
      0,
      0,
      0,
      0,
    ]
    return new Blob([bytes.subarray(0, app0), new Uint8Array(exif), bytes.subarray(app0)], { type: 'image/jpeg' })
  }
}

/** What {@link installPhotoMaker} puts on `window`. */
export type MakePhoto = (width: number, height: number, quality: number, orientation?: number) => Promise<Blob>
