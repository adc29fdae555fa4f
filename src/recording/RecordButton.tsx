import type { UploadResult } from '../../engine/index.ts'
import { formatBytes } from '../format.ts'
import { errorMessage } from '../messages.ts'
import { Figures, Pieces } from '../ui/Pieces.tsx'
import { RecordingError } from './errors.ts'
import { type RecordingStatus, type UseRecordingUploadOptions, useRecordingUpload } from './useRecordingUpload.ts'

/** Props of {@link RecordButton}: every {@link UseRecordingUploadOptions}, plus its label and looks. */
export interface RecordButtonProps extends Omit<UseRecordingUploadOptions, 'onUploaded'> {
  /** The start button's text. @default 'Record video' ('Record audio' for the microphone, 'Record the screen' for the screen) */
  label?: string
  /** Extra class names on the root (theming: set `--updraft-*` variables there). @default none */
  className?: string
  /** Force a colour scheme. @default the system's (`prefers-color-scheme`) */
  theme?: 'light' | 'dark'
  /** The recording, stored and verified: what the app keeps (the key, the URL). @default none */
  onUploadComplete?: (result: UploadResult) => void
}

const WORDS: Record<RecordingStatus, string> = {
  idle: '',
  starting: 'Starting…',
  recording: 'Recording',
  paused: 'Paused',
  finishing: 'Finishing upload…',
  done: 'Saved',
  failed: 'Failed',
  cancelled: 'Cancelled',
}

const defaultLabel = (source: UseRecordingUploadOptions['source']) =>
  source === 'microphone' ? 'Record audio' : source === 'screen' ? 'Record the screen' : 'Record video'

/**
 * A record button that uploads while it records: Start, then the elapsed time, bytes sent of bytes
 * recorded, Pause/Resume and Stop; after Stop, "Finishing upload…" until the recording is stored.
 * A recording an earlier visit left unfinished (the tab closed mid-recording) is offered as "A
 * recording was interrupted", with Finish uploading and Discard (`keepLocalCopy`).
 * The recording goes up in parts as it is made (see `useRecordingUpload`). Import the styles once:
 * `import 'updraft-s3/react/ui/styles.css'`.
 *
 * Never throws: a refused camera or screen, an ended track, a failed upload are said in words.
 * @example
 * ```tsx
 * import { RecordButton } from 'updraft-s3/react/recording'
 * import 'updraft-s3/react/ui/styles.css'
 *
 * <RecordButton source="screen" strategy="presigned" onUploadComplete={({ key }) => save(key)} />
 * ```
 */
export function RecordButton({ label, className, theme, onUploadComplete, ...options }: RecordButtonProps) {
  const recording = useRecordingUpload({ ...options, onUploaded: onUploadComplete })
  const { status, elapsedMs, recordedBytes, sentBytes, error, endedBy, result } = recording
  const live = status === 'recording' || status === 'paused'
  const busy = live || status === 'starting' || status === 'finishing'
  const percent = recordedBytes ? Math.min(100, Math.floor((100 * sentBytes) / recordedBytes)) : 0
  const time = formatElapsed(elapsedMs)

  return (
    <div className={`updraft updraft-record${className ? ` ${className}` : ''}`} data-theme={theme} data-state={status}>
      {/* biome-ignore lint/a11y/useSemanticElements: a row of buttons, not a form's fields: a fieldset would bring its border and legend */}
      <div className="updraft-button-row" role="group" aria-label="Recording">
        {!busy && (
          <button type="button" className="updraft-button updraft-primary" onClick={() => void recording.start()}>
            {label ?? defaultLabel(options.source)}
          </button>
        )}
        {live && (
          <>
            <button
              type="button"
              className="updraft-button"
              onClick={status === 'paused' ? recording.resume : recording.pause}
              aria-label={status === 'paused' ? 'Resume recording' : 'Pause recording'}
            >
              {status === 'paused' ? 'Resume' : 'Pause'}
            </button>
            <button
              type="button"
              className="updraft-button updraft-primary"
              onClick={recording.stop}
              aria-label="Stop recording"
            >
              Stop
            </button>
          </>
        )}
        {busy && (
          <button
            type="button"
            className="updraft-button updraft-quiet"
            onClick={recording.cancel}
            aria-label="Cancel recording"
          >
            Cancel
          </button>
        )}
        {status !== 'idle' && (
          <span className="updraft-record-status" aria-live="polite">
            {live && <span className="updraft-record-dot" aria-hidden="true" />}
            <span className="updraft-state">{WORDS[status]}</span>
          </span>
        )}
        {status !== 'idle' && status !== 'starting' && (
          <span className="updraft-record-time" role="timer" aria-label={`Recorded ${time}`}>
            {time}
          </span>
        )}
      </div>
      {status !== 'idle' && status !== 'starting' && (
        <>
          <div
            className="updraft-bar"
            role="progressbar"
            aria-label="Recording sent to storage"
            aria-valuemin={0}
            aria-valuemax={100}
            aria-valuenow={percent}
            aria-valuetext={`${formatBytes(sentBytes)} sent of ${formatBytes(recordedBytes)} recorded`}
          >
            <div className="updraft-bar-fill" style={{ width: `${percent}%` }} />
          </div>
          <p className="updraft-row-foot">
            <Figures>
              <Pieces texts={[`${formatBytes(sentBytes)} sent`, `${formatBytes(recordedBytes)} recorded`]} />
            </Figures>
          </p>
        </>
      )}
      {!busy &&
        recording.unfinished.map((kept) => (
          // biome-ignore lint/a11y/useSemanticElements: a line of words and two buttons, not a form's fields
          <div
            className="updraft-record-unfinished"
            role="group"
            aria-label={`Interrupted recording ${kept.name}`}
            key={kept.id}
          >
            <p className="updraft-hint">
              A recording was interrupted ({formatBytes(kept.size)} kept in this browser, from{' '}
              {new Date(kept.startedAt).toLocaleString()})
            </p>
            <div className="updraft-button-row">
              <button
                type="button"
                className="updraft-button updraft-primary"
                onClick={() => void recording.finish(kept)}
              >
                Finish uploading
              </button>
              <button
                type="button"
                className="updraft-button updraft-quiet"
                onClick={() => void recording.discard(kept)}
              >
                Discard
              </button>
            </div>
          </div>
        ))}
      {status === 'done' && endedBy === 'track-ended' && (
        <p className="updraft-hint">
          The recording ended when its source stopped (sharing ended, or the device went away); what was recorded is
          saved.
        </p>
      )}
      {status === 'done' && result && (
        <p className="updraft-hint">
          Saved as{' '}
          <a className="updraft-link" href={result.url}>
            {result.key.split('/').pop()}
          </a>
        </p>
      )}
      {error && (
        <p className="updraft-message updraft-drop-error" role="alert">
          {error instanceof RecordingError ? error.message : errorMessage(error)}
        </p>
      )}
    </div>
  )
}

/** "0:07", "12:34", "1:02:03". */
export function formatElapsed(ms: number): string {
  const seconds = Math.floor(ms / 1000)
  const pad = (n: number) => String(n).padStart(2, '0')
  const [h, m, s] = [Math.floor(seconds / 3600), Math.floor(seconds / 60) % 60, seconds % 60]
  return h ? `${h}:${pad(m)}:${pad(s)}` : `${m}:${pad(s)}`
}
