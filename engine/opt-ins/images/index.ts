import { shrinkOffThread } from './off-thread.ts'
import {
  fallbackType,
  HEAD_BYTES,
  isAnimated,
  outputType,
  passesUnchanged,
  renamed,
  type ShrinkImageOptions,
  shrinkPlan,
} from './plan.ts'

export type { ImageType, ShrinkImageOptions } from './plan.ts'

/**
 * `file` made smaller before it leaves the device, or `file` itself (the same object) when that
 * would not help. An opt-in of its own (`updraft-s3/images`): pages that do not import it ship
 * none of it.
 *
 * - Resized to fit `maxWidth` × `maxHeight` (aspect kept, EXIF orientation applied first, so a
 *   portrait photo stays upright), and written as `type` at `quality`.
 * - Never worse: when the result is not smaller, `file` goes. An image that already fits and is
 *   of the type asked goes as it is (never encoded twice). So do GIFs (often animated), animated
 *   PNGs and WebPs, SVG, anything not an image, and whatever the browser cannot decode (HEIC in
 *   Chromium and Firefox, a damaged file).
 * - **Metadata**: an image written anew carries none of its EXIF, XMP or IPTC (camera, time,
 *   **GPS location**): a canvas keeps pixels only. An image that goes unchanged keeps all of it.
 * - The new file keeps `file`'s name (its extension changed with its type: `.png` → `.webp`) and
 *   `lastModified`; its `type` and `size` are the new bytes', so an upload announces those.
 *
 * The decoding and encoding run in a Web Worker (createImageBitmap and OffscreenCanvas), made from
 * this module's own code through a Blob URL; where none can start or draw (a CSP whose `worker-src`
 * leaves out `blob:`, an older browser) on the page, one image at a time. Browsers only: Node has no
 * image decoder, and there every file goes unchanged.
 *
 * @param file - The picked file.
 * @param options - The box, the type and the quality; see {@link ShrinkImageOptions}.
 * @returns The smaller file, or `file`.
 * @throws `TypeError` for an option out of range (checked before anything is read).
 * @example
 * ```ts
 * import { upload } from 'updraft-s3'
 * import { shrinkImage } from 'updraft-s3/images'
 *
 * const smaller = await shrinkImage(file, { maxWidth: 2048, maxHeight: 2048, quality: 0.8 })
 * await upload(smaller)
 * ```
 */
export function shrinkImage(file: File, options?: ShrinkImageOptions): Promise<File> {
  return shrinkImages(options)(file)
}

/**
 * {@link shrinkImage} with its options fixed, for the React hooks' and components' `prepare`:
 * every picked or dropped file goes through it before the upload API is asked. The options are
 * checked here, once.
 *
 * @throws `TypeError` for an option out of range.
 * @example
 * ```tsx
 * import { UploadDropzone } from 'updraft-s3/react/ui'
 * import { shrinkImages } from 'updraft-s3/images'
 *
 * <UploadDropzone prepare={shrinkImages({ maxWidth: 2048, maxHeight: 2048, type: 'image/webp' })} />
 * ```
 */
export function shrinkImages(options?: ShrinkImageOptions): (file: File) => Promise<File> {
  const plan = shrinkPlan(options)
  return async (file) => {
    if (passesUnchanged(file.type) || typeof createImageBitmap !== 'function') return file
    if (isAnimated(file.type, new Uint8Array(await file.slice(0, HEAD_BYTES).arrayBuffer()))) return file
    const type = outputType(file.type, plan.type)
    const job = { ...plan, image: file, type, fallback: fallbackType(file.type), convert: type !== file.type }
    // An image the browser could not draw (out of memory for its size, a canvas refused) goes as it is.
    const outcome = await shrinkOffThread(job).catch(() => undefined)
    if (!outcome || 'unchanged' in outcome || outcome.image.size >= file.size) return file
    const written = outcome.image.type as typeof type
    return new File([outcome.image], renamed(file.name, written), { type: written, lastModified: file.lastModified })
  }
}
