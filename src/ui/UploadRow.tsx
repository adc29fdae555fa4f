import { forwardRef, memo, useEffect, useId, useRef, useState } from 'react'
import type { UploadLimits } from '../file-checks.ts'
import { formatBytes, formatSpeed, formatTimeLeft } from '../format.ts'
import { errorMessage } from '../messages.ts'
import { isRunning, type UploadEntry } from '../upload-list.ts'
import { FilePreview } from './FilePreview.tsx'
import { ownClick } from './own-click.ts'
import { Figures, Pieces } from './Pieces.tsx'
import { FINISHING_WAIT, ROW_LABELS, type RowState, rowState } from './row-state.ts'

export interface UploadRowProps {
  entry: UploadEntry
  online: boolean
  /** Bytes per second while it moves (the list's `useTransferRates`); undefined until a real speed is known. */
  rate?: number
  limits?: UploadLimits
  /** What the server said about this file once done (`entry.serverData`), in words. */
  describeServerData?: (serverData: unknown, file: File) => string | undefined
  onRetry(id: string): void
  onRemove(id: string): void
  /** Something worth saying to screen readers that the row's text does not show ("Link copied"). */
  onAnnounce(message: string): void
}

/**
 * One file: preview, name, size, progress, speed and time left, what it is doing in words, and
 * what can be done with it (Cancel while it runs; then Retry, Copy link, Remove). The `<li>` takes
 * focus (tabIndex -1) when the button that had it goes away.
 */
const Row = forwardRef<HTMLLIElement, UploadRowProps>(function UploadRow(
  { entry, online, rate, limits, describeServerData, onRetry, onRemove, onAnnounce },
  ref,
) {
  const { file, size, uploaded, progress, error, result } = entry
  const state = rowState(entry, online)
  const name = file.name
  const moving = state === 'uploading'
  const resuming = useResuming(state, rate)
  const label = resuming ? 'Resuming…' : ROW_LABELS[state]
  const [copied, setCopied] = useState(false)
  const [showDetails, setShowDetails] = useState(false)
  const detailsId = useId()
  const retryRef = useRef<HTMLButtonElement>(null)
  const cancelling = useRef(false)

  // After Cancel, its button is gone: focus goes to Retry, not to the page's body.
  useEffect(() => {
    if (cancelling.current && !isRunning(entry)) {
      cancelling.current = false
      retryRef.current?.focus()
    }
  }, [entry])

  const copy = async () => {
    if (!result) return
    const ok = await copyText(result.url)
    onAnnounce(ok ? `Link to ${name} copied` : `Could not copy the link to ${name}`)
    if (ok) {
      setCopied(true)
      setTimeout(() => setCopied(false), 2000)
    }
  }

  const percent = Math.floor(progress)
  // Speed and time left only once a real speed is known (useTransferRates): never a stale "0 B/s"
  // or an hour left right after Resume. Paused, resuming or cancelled, the row keeps how far it got
  // and the speed's place as blank space: it neither shrinks nor moves its buttons under the pointer.
  const rateText =
    rate !== undefined && moving
      ? [formatSpeed(rate), ...(rate > 0 ? [formatTimeLeft((size - uploaded) / rate)] : [])]
      : []
  const lastRate = useRef<string[]>([])
  if (rateText.length > 0) lastRate.current = rateText
  const sizes = `${formatBytes(uploaded)} of ${formatBytes(size)}`
  // Every byte is out: what it waits for, rather than "99%" under a full bar for seconds.
  const figures =
    state === 'finishing'
      ? [`${formatBytes(size)} sent`, FINISHING_WAIT]
      : isRunning(entry) || state === 'cancelled'
        ? [`${percent}%`, sizes]
        : []
  const serverNote = entry.serverData !== undefined ? describeServerData?.(entry.serverData, file) : undefined
  const message =
    error && (state === 'failed' || state === 'refused' || state === 'retrying')
      ? errorMessage(error, { file, limits, retrying: state === 'retrying' })
      : undefined

  return (
    <li
      className="updraft-row"
      data-testid="upload-row"
      data-status={entry.status}
      data-state={state}
      ref={ref}
      tabIndex={-1}
    >
      <FilePreview file={file} />
      <div className="updraft-row-main">
        <div className="updraft-row-head">
          {/* Once stored, the name opens the file: a link line under a finished row made it grow and shove the rows below */}
          {result ? (
            <a className="updraft-name updraft-link" href={result.url} target="_blank" rel="noreferrer" title={name}>
              {name}
            </a>
          ) : (
            <span className="updraft-name" title={name}>
              {name}
            </span>
          )}
          <span className="updraft-size">{formatBytes(size)}</span>
        </div>
        {state !== 'refused' && (
          <div
            className="updraft-bar"
            role="progressbar"
            aria-label={`Upload of ${name}`}
            aria-valuemin={0}
            aria-valuemax={100}
            aria-valuenow={percent}
            aria-valuetext={`${label}, ${percent}%, ${formatBytes(uploaded)} of ${formatBytes(size)}`}
          >
            <div className="updraft-bar-fill" style={{ width: `${progress}%` }} />
          </div>
        )}
        {/* One line in every state (three on a narrow row, styles.css): a failed row's sentence is cut to it, whole in its title and under Details, so a row that fails does not grow and shove the rows below */}
        <div className="updraft-row-foot">
          <span className="updraft-state">{label}</span>
          {figures.length > 0 && (
            <Figures>
              <Pieces texts={figures} />
              {state !== 'finishing' &&
                (rateText.length > 0 ? (
                  <Pieces texts={rateText} after />
                ) : (
                  <Pieces texts={lastRate.current} after ghost />
                ))}
            </Figures>
          )}
          {serverNote && (
            <span className="updraft-server-note" title={serverNote}>
              {serverNote}
            </span>
          )}
          {message && (
            <span className="updraft-message" title={message}>
              {message}
            </span>
          )}
          {state === 'failed' && error && (
            <button
              type="button"
              className="updraft-details-toggle"
              aria-expanded={showDetails}
              aria-controls={showDetails ? detailsId : undefined}
              onClick={() => setShowDetails((shown) => !shown)}
            >
              Details
            </button>
          )}
        </div>
        {state === 'failed' && error && showDetails && (
          <div className="updraft-details" id={detailsId}>
            {message}
            {error.message !== message && <code>{error.message}</code>}
          </div>
        )}
      </div>
      <div className="updraft-actions">
        {/* Nothing to hold while `prepare` makes the file, nor once every byte is out */}
        {isRunning(entry) && state !== 'finishing' && state !== 'preparing' && (
          <button
            type="button"
            className="updraft-button updraft-small updraft-quiet"
            aria-label={`${state === 'paused' ? 'Resume' : 'Pause'} upload of ${name}`}
            onClick={(event) => ownClick(event) && (state === 'paused' ? entry.resume() : entry.pause())}
          >
            {state === 'paused' ? 'Resume' : 'Pause'}
          </button>
        )}
        {isRunning(entry) && (
          <button
            type="button"
            className="updraft-button updraft-small"
            aria-label={`Cancel upload of ${name}`}
            // Retry's place: the second click of a double click on Retry lands here, and must not cancel.
            onClick={(event) => {
              if (!ownClick(event)) return
              cancelling.current = true
              entry.abort()
            }}
          >
            Cancel
          </button>
        )}
        {/* Ended rows put Remove first: the last place, where Cancel was, goes to Retry or Copy link (neither loses anything) */}
        {!isRunning(entry) && (
          <button
            type="button"
            className="updraft-button updraft-small updraft-quiet"
            aria-label={`Remove ${name} from the list`}
            // The next row's Remove comes up under the pointer: a double click removes one row, not two.
            onClick={(event) => ownClick(event) && onRemove(entry.id)}
          >
            Remove
          </button>
        )}
        {(state === 'failed' || state === 'cancelled') && (
          <button
            type="button"
            ref={retryRef}
            className="updraft-button updraft-small"
            aria-label={`Retry upload of ${name}`}
            // It takes Cancel's place: a double click on Cancel must not start the upload again.
            onClick={(event) => ownClick(event) && onRetry(entry.id)}
          >
            Retry
          </button>
        )}
        {result && (
          <button
            type="button"
            className="updraft-button updraft-small"
            aria-label={`Copy link to ${name}`}
            onClick={(event) => ownClick(event) && void copy()}
          >
            {/* Both words take the same cell: the button is as wide as the wider one, whichever shows */}
            <span className="updraft-swap">
              <span className={copied ? 'is-off' : undefined}>Copy link</span>
              <span className={copied ? undefined : 'is-off'}>Copied</span>
            </span>
          </button>
        )}
      </div>
    </li>
  )
})

/** Memoised: the list re-renders on every progress tick, a row only when its own props change. */
export const UploadRow = memo(Row)

/**
 * True from Resume until a speed is known again: the engine first re-sends the parts Pause
 * cancelled, and the count only grows past where it was seconds later. Until then the row says
 * "Resuming…" rather than a speed it does not have.
 */
function useResuming(state: RowState, rate: number | undefined): boolean {
  const [resuming, setResuming] = useState(false)
  const previous = useRef(state)
  useEffect(() => {
    if (previous.current === 'paused' && (state === 'uploading' || state === 'queued')) setResuming(true)
    else if (state !== 'uploading' && state !== 'queued') setResuming(false)
    previous.current = state
  }, [state])
  useEffect(() => {
    if (rate !== undefined) setResuming(false)
  }, [rate])
  // The render that brings the first speed says "Uploading" with it, not "Resuming…" a moment longer.
  return resuming && rate === undefined && (state === 'uploading' || state === 'queued')
}

/** The Clipboard API where the page may use it (a secure context), else the old copy command. */
async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text)
    return true
  } catch {
    const field = document.createElement('textarea')
    field.value = text
    field.setAttribute('readonly', '')
    field.style.position = 'fixed'
    field.style.opacity = '0'
    document.body.append(field)
    field.select()
    const ok = document.execCommand('copy')
    field.remove()
    return ok
  }
}
