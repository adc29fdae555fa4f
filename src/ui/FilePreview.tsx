import { useEffect, useRef, useState } from 'react'

/** Raster types every current browser decodes; SVG and others get an icon (createImageBitmap refuses SVG blobs). */
const PREVIEWABLE = /^image\/(png|jpeg|gif|webp|avif|bmp)$/
/** Past this, decoding for a 40-pixel preview costs more memory than it is worth. */
const MAX_PREVIEW_BYTES = 40 * 1024 * 1024
const SIZE = 96

/**
 * A thumbnail for an image, made lazily (when the row is first visible, by a module loaded then),
 * else an icon with the file's extension. Decorative: the row's text names the file.
 */
export function FilePreview({ file }: { file: File }) {
  const box = useRef<HTMLSpanElement>(null)
  const [src, setSrc] = useState<string>()
  const previewable = PREVIEWABLE.test(file.type) && file.size <= MAX_PREVIEW_BYTES

  useEffect(() => {
    const element = box.current
    if (!previewable || !element) return
    let url: string | undefined
    let cancelled = false
    const load = () =>
      import('./thumbnail.ts')
        .then(({ makeThumbnail }) => makeThumbnail(file, SIZE))
        .then((made) => (cancelled ? URL.revokeObjectURL(made) : setSrc((url = made))))
        // A file that only claims to be an image keeps its icon.
        .catch(() => {})
    if (typeof IntersectionObserver === 'undefined') return // no way to tell what is visible: keep the icon
    const observer = new IntersectionObserver((entries) => {
      if (!entries.some((entry) => entry.isIntersecting)) return
      observer.disconnect()
      void load()
    })
    observer.observe(element)
    return () => {
      cancelled = true
      observer.disconnect()
      if (url) URL.revokeObjectURL(url)
    }
  }, [file, previewable])

  return (
    <span className="updraft-preview" ref={box} aria-hidden="true">
      {src ? <img src={src} alt="" className="updraft-thumbnail" /> : <FileIcon name={file.name} />}
    </span>
  )
}

/** A page with a folded corner and the extension on it ("PDF", "ZIP"); one shape for every type keeps it small. */
function FileIcon({ name }: { name: string }) {
  const extension = /\.([^.]{1,4})$/.exec(name)?.[1]?.toUpperCase() ?? ''
  return (
    // biome-ignore lint/a11y/noSvgWithoutTitle: decorative; the preview box holding it is aria-hidden and the row names the file
    <svg viewBox="0 0 32 40" className="updraft-icon" focusable="false">
      <path d="M3 1h18l8 8v28a2 2 0 0 1-2 2H3a2 2 0 0 1-2-2V3a2 2 0 0 1 2-2z" className="updraft-icon-page" />
      <path d="M21 1v8h8" className="updraft-icon-fold" />
      <text x="15" y="30" textAnchor="middle" className="updraft-icon-text">
        {extension}
      </text>
    </svg>
  )
}
