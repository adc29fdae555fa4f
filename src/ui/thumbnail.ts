/**
 * A small preview of an image file, made off the main thread where the browser can
 * (`createImageBitmap` decodes and scales in one step, honouring EXIF orientation). Loaded with a
 * dynamic `import()` only when a row with an image scrolls into view, so pages that never show
 * one never load it.
 */
export async function makeThumbnail(file: Blob, size: number): Promise<string> {
  const bitmap = await createImageBitmap(file, {
    resizeWidth: size,
    resizeQuality: 'medium',
    imageOrientation: 'from-image',
  })
  try {
    const canvas = new OffscreenCanvas(bitmap.width, bitmap.height)
    canvas.getContext('2d')!.drawImage(bitmap, 0, 0)
    return URL.createObjectURL(await canvas.convertToBlob({ type: 'image/png' }))
  } finally {
    bitmap.close()
  }
}
