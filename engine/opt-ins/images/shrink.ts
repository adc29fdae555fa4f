// The pixel work, and the worker's program around it. The worker is made from source text (a Blob
// URL of a string, as the checksum opt-in's: no worker file, no bundler setting), so `drawSmaller`
// and `serveShrinking` name nothing outside themselves but built-ins and what they are given.
import { fitWithin, type ImageType } from './plan.ts'

/** One image to write smaller: what plan.ts decided before any pixel was read. */
export interface ShrinkJob {
  image: Blob
  maxWidth: number
  maxHeight: number
  quality: number
  type: ImageType
  /** Written when the browser cannot write `type` (plan.ts `fallbackType`). */
  fallback: ImageType
  /** Write it even when it already fits: its type changes. */
  convert: boolean
}

/** What came of a job: the new image, or why the original stays. */
export type ShrinkOutcome =
  | { image: Blob; width: number; height: number }
  /** `undecodable`: the browser cannot read it (HEIC in Chromium, a damaged file); `fits`: already within the box, of the type asked. */
  | { unchanged: 'undecodable' | 'fits' }

/**
 * Decodes `image` with its EXIF orientation applied, draws it to fit the box and encodes it. Runs
 * in a worker (OffscreenCanvas) or, where none can, on the page (OffscreenCanvas, else a canvas
 * element). JPEG has no transparency: it is drawn on white, as a viewer would show it, not black.
 */
export async function drawSmaller(job: ShrinkJob, fitInto: typeof fitWithin): Promise<ShrinkOutcome> {
  let bitmap: ImageBitmap
  try {
    bitmap = await createImageBitmap(job.image, { imageOrientation: 'from-image' })
  } catch {
    return { unchanged: 'undecodable' }
  }
  try {
    const { width, height } = fitInto(bitmap.width, bitmap.height, job.maxWidth, job.maxHeight)
    if (!job.convert && width === bitmap.width && height === bitmap.height) return { unchanged: 'fits' }
    const canvas =
      typeof OffscreenCanvas === 'function'
        ? new OffscreenCanvas(width, height)
        : Object.assign(document.createElement('canvas'), { width, height })
    const context = canvas.getContext('2d') as OffscreenCanvasRenderingContext2D
    const encode = async (type: ImageType): Promise<Blob | null> => {
      context.clearRect(0, 0, width, height)
      if (type === 'image/jpeg') {
        context.fillStyle = '#fff'
        context.fillRect(0, 0, width, height)
      }
      context.imageSmoothingQuality = 'high'
      context.drawImage(bitmap, 0, 0, width, height)
      return 'convertToBlob' in canvas
        ? canvas.convertToBlob({ type, quality: job.quality })
        : new Promise((resolve) => (canvas as HTMLCanvasElement).toBlob(resolve, type, job.quality))
    }
    let image = await encode(job.type)
    // A canvas asked for a type it cannot write answers PNG (HTML's canvas serialization rules).
    if (image?.type !== job.type) image = await encode(job.fallback)
    if (!image) throw new Error(`the canvas wrote no ${job.fallback} of ${width}×${height}`)
    return { image, width, height }
  } finally {
    bitmap.close()
  }
}

/** Page to worker: one job. */
export interface ShrinkRequest {
  id: number
  job: ShrinkJob
}

/** Worker to page: `ready` once its program runs, then each job's outcome, or why it has none. */
export type ShrinkReply = { ready: true } | { id: number; outcome: ShrinkOutcome } | { id: number; error: string }

/** What the program needs of its global scope: a DedicatedWorkerGlobalScope, or a stand-in in unit tests. */
export interface ShrinkScope {
  onmessage: ((event: { data: ShrinkRequest }) => void) | null
  postMessage(reply: ShrinkReply): void
}

/**
 * The worker's program: jobs one at a time, in order (a 12-megapixel photo decodes to 48 MB of
 * pixels; several at once would hold several).
 */
export function serveShrinking(scope: ShrinkScope, draw: typeof drawSmaller, fitInto: typeof fitWithin): void {
  let turn = Promise.resolve()
  scope.onmessage = ({ data: { id, job } }) => {
    turn = turn
      .then(() => draw(job, fitInto))
      .then(
        (outcome) => scope.postMessage({ id, outcome }),
        (error: unknown) => scope.postMessage({ id, error: String(error) }),
      )
  }
  scope.postMessage({ ready: true })
}

/** The worker's whole source: its program called with the functions it runs, all as text. */
export const workerSource = () => `(${serveShrinking})(self,${drawSmaller},${fitWithin})`
