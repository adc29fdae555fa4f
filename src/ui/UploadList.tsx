import { type RefObject, useCallback, useEffect, useLayoutEffect, useRef, useState } from 'react'
import type { UploadLimits } from '../file-checks.ts'
import { formatBytes, formatTimeLeft } from '../format.ts'
import { errorMessage } from '../messages.ts'
import { isRunning, type UploadEntry } from '../upload-list.ts'
import type { S3Upload } from '../useS3Upload.ts'
import { Figures, Pieces } from './Pieces.tsx'
import { overall, rowState } from './row-state.ts'
import { UploadRow } from './UploadRow.tsx'
import { useOnline } from './useOnline.ts'
import { useTransferRates } from './useTransferRate.ts'

/** Props of {@link UploadList}. */
export interface UploadListProps {
  /** The hook whose uploads to list (`useS3Upload` or `useS3Dropzone`). */
  uploads: Pick<S3Upload, 'files' | 'retry' | 'remove' | 'clearEnded'>
  /** The limits the files were checked against, to word refusals. @default none */
  limits?: UploadLimits
  /** Where focus goes when the list it was in empties (the button that adds files). */
  returnFocusTo: RefObject<HTMLElement | null>
  /** A finished row's note from what the server answered (`UploadComponentProps.describeServerData`). */
  describeServerData?: (serverData: unknown, file: File) => string | undefined
}

/**
 * The rows, an overall bar with time left, a summary with "Clear finished", and one polite live
 * region that says each outcome ("photo.jpg uploaded", "notes.pdf not uploaded: …") once.
 * Focus never falls to the page: when the element holding it goes (a row removed, Cancel gone),
 * it moves to the nearest row, or back to `returnFocusTo`. The list `<UploadDropzone>` and
 * `<UploadButton>` show, for a layout of your own around the headless hooks.
 *
 * @example
 * ```tsx
 * const uploads = useS3Upload()
 * const button = useRef<HTMLButtonElement>(null)
 * <button ref={button} onClick={uploads.openFileDialog}>Add files</button>
 * <UploadList uploads={uploads} returnFocusTo={button} />
 * ```
 */
export function UploadList({ uploads, limits, returnFocusTo, describeServerData }: UploadListProps) {
  const { files, retry, remove, clearEnded } = uploads
  const online = useOnline()
  const [announcement, setAnnouncement] = useState('')
  // Stable callbacks: a row re-renders when its own entry changes, not on every other row's tick.
  const announce = useCallback(
    (message: string) =>
      // The same words twice in a row would not be read again: alternate a trailing no-break space.
      setAnnouncement((previous) => (previous === message ? `${message}\u00a0` : message)),
    [],
  )
  const onRetry = useCallback((id: string) => void retry(id), [retry])

  useOutcomeAnnouncements(files, limits, announce)
  const { containerRef, rowRef } = useFocusKeeper(returnFocusTo)

  const total = overall(files)
  const rates = useTransferRates(files, (entry) => rowState(entry, online) === 'uploading')
  const left = timeLeft(files, online, rates)
  const percent = total.total > 0 ? Math.floor((100 * total.sent) / total.total) : total.running > 0 ? 0 : 100
  // Once nothing runs, the figures say what was stored, of all that was picked.
  const figures =
    total.running > 0
      ? `${percent}% of ${formatBytes(total.total)}`
      : `${formatBytes(total.sent)} of ${formatBytes(total.total)} stored`
  const counts = [
    total.preparing > 0 && `${total.preparing} preparing`,
    total.running > total.paused + total.preparing && `${total.running - total.paused - total.preparing} uploading`,
    total.paused > 0 && `${total.paused} paused`,
    total.done > 0 && `${total.done} done`,
    total.cancelled > 0 && `${total.cancelled} cancelled`,
    total.failed > 0 && `${total.failed} not uploaded`,
  ].filter((count) => count !== false)

  return (
    <div className="updraft-list" ref={containerRef}>
      {files.length > 0 && (
        <div className="updraft-summary">
          {/* Every listed file counts (a cancelled one as nothing stored): the bar and its figures
              never leave, and the rows below do not jump up under the pointer. */}
          <div
            className="updraft-bar updraft-overall"
            role="progressbar"
            aria-label="All uploads"
            aria-valuemin={0}
            aria-valuemax={100}
            aria-valuenow={percent}
            aria-valuetext={`${percent}%, ${formatBytes(total.sent)} of ${formatBytes(total.total)}${total.running > 0 ? '' : ' stored'}${left ? `, ${left}` : ''}`}
          >
            <div className="updraft-bar-fill" style={{ width: `${percent}%` }} />
          </div>
          <p className="updraft-summary-text">
            <Figures className="updraft-counts">
              <Pieces texts={counts} />
            </Figures>
            <Figures>
              <Pieces texts={left ? [figures, left] : [figures]} />
            </Figures>
          </p>
          <button
            type="button"
            className="updraft-button updraft-small updraft-quiet"
            onClick={clearEnded}
            disabled={files.every(isRunning)}
          >
            Clear finished
          </button>
        </div>
      )}
      <ul className="updraft-rows" aria-label="Uploads">
        {files.map((entry) => (
          <UploadRow
            key={entry.id}
            ref={rowRef(entry.id)}
            entry={entry}
            online={online}
            rate={rates.get(entry.id)}
            limits={limits}
            describeServerData={describeServerData}
            onRetry={onRetry}
            onRemove={remove}
            onAnnounce={announce}
          />
        ))}
      </ul>
      <div className="updraft-visually-hidden" aria-live="polite" role="status">
        {announcement}
      </div>
    </div>
  )
}

/**
 * The summary's time left: the bytes still to send of the uploads that move (a paused or offline
 * one's are not waited for), at the sum of their speeds — with one upload, the very figure its row
 * shows. Nothing until every moving upload has a real speed; "paused" when only paused ones are left.
 */
function timeLeft(files: UploadEntry[], online: boolean, rates: ReadonlyMap<string, number>): string | undefined {
  const states = files.map((entry) => rowState(entry, online))
  const moving = files.filter((_, index) => states[index] === 'uploading')
  const waiting = files.filter(
    (entry, index) => isRunning(entry) && states[index] !== 'paused' && states[index] !== 'offline',
  )
  if (moving.length === 0) return states.includes('paused') && waiting.length === 0 ? 'paused' : undefined
  if (moving.some((entry) => rates.get(entry.id) === undefined)) return undefined
  const rate = moving.reduce((sum, entry) => sum + rates.get(entry.id)!, 0)
  const bytes = waiting.reduce((sum, entry) => sum + entry.size - entry.uploaded, 0)
  return rate > 0 ? formatTimeLeft(bytes / rate) : undefined
}

/**
 * Says once, politely, how each upload ended: the uploads that end together (a batch confirmed at
 * once) in one announcement, after the effects. Announced from the effect itself, each of 30
 * files confirmed together re-rendered the list from the previous one's effect, and React gave up
 * ("Maximum update depth exceeded").
 */
function useOutcomeAnnouncements(
  files: UploadEntry[],
  limits: UploadLimits | undefined,
  announce: (message: string) => void,
) {
  const told = useRef(new Set<string>())
  const untold = useRef<string[]>([])
  useEffect(() => {
    const news: string[] = []
    for (const entry of files) {
      if (told.current.has(entry.id)) continue
      const name = entry.file.name
      if (entry.status === 'done') news.push(`${name} uploaded`)
      else if (entry.status === 'aborted') news.push(`${name} cancelled`)
      else if (entry.status === 'error')
        news.push(`${name} not uploaded: ${errorMessage(entry.error, { file: entry.file, limits })}`)
      else continue
      told.current.add(entry.id)
    }
    if (news.length === 0) return
    if (untold.current.length === 0) queueMicrotask(() => announce(untold.current.splice(0).join('. ')))
    untold.current.push(...news)
  })
}

/**
 * Remembers where in the list focus last was; when it falls to the body (its button or row went,
 * or "Clear finished" emptied the list), puts it on that row, the row that took its place, the
 * last row, or `fallback`. Focus moved elsewhere on purpose (a click or Tab outside) is left alone.
 */
function useFocusKeeper(fallback: RefObject<HTMLElement | null>) {
  const containerRef = useRef<HTMLDivElement>(null)
  const rows = useRef(new Map<string, HTMLLIElement>())
  const last = useRef<{ id?: string; index: number }>(undefined)

  useEffect(() => {
    const moved = (event: Event) => {
      const target = event.target as HTMLElement
      const container = containerRef.current
      if (!container?.contains(target)) {
        last.current = undefined
        return
      }
      if (event.type !== 'focusin') return
      const row = target.closest('li')
      const id = [...rows.current].find(([, element]) => element === row)?.[0]
      last.current = { id, index: row ? [...row.parentElement!.children].indexOf(row) : 0 }
    }
    document.addEventListener('focusin', moved)
    document.addEventListener('pointerdown', moved)
    return () => {
      document.removeEventListener('focusin', moved)
      document.removeEventListener('pointerdown', moved)
    }
  }, [])

  useLayoutEffect(() => {
    const active = document.activeElement
    if (!last.current || (active && active !== document.body)) return
    const { id, index } = last.current
    const remaining = [...rows.current.values()]
    const target = (id && rows.current.get(id)) || remaining[Math.min(index, remaining.length - 1)] || fallback.current
    last.current = undefined
    target?.focus()
  })

  // One ref callback per row for its lifetime: a new one each render would detach and re-attach
  // every row's element on every progress tick.
  const rowRefs = useRef(new Map<string, (element: HTMLLIElement | null) => void>())
  const rowRef = (id: string) => {
    let ref = rowRefs.current.get(id)
    if (!ref) {
      ref = (element) => {
        if (element) return void rows.current.set(id, element)
        rows.current.delete(id)
        rowRefs.current.delete(id)
      }
      rowRefs.current.set(id, ref)
    }
    return ref
  }
  return { containerRef, rowRef }
}
