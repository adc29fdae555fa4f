import type { UploadEntry, UploadStatus } from '../../src/index.ts'
import { formatBytes, formatPercent, formatSpeed } from './format.ts'
import { useTransferRate } from './useTransferRate.ts'

const STATUS_LABELS: Record<UploadStatus, string> = {
  queued: 'Queued',
  uploading: 'Uploading',
  retrying: 'Retrying',
  done: 'Done',
  error: 'Failed',
  aborted: 'Aborted',
}

/** One upload: what it is, how far it got, and what can be done with it. */
export function UploadRow({ entry }: { entry: UploadEntry }) {
  const { file, size, uploaded, progress, status, error, result } = entry
  const running = status === 'queued' || status === 'uploading' || status === 'retrying'
  const rate = useTransferRate(uploaded, status !== 'queued')
  const percent = Math.floor(progress)

  return (
    <li className="upload-row" data-testid="upload-row" data-status={status}>
      <div className="row-head">
        <span className="file-name" title={file.name}>
          {file.name}
        </span>
        <span className="file-size">{formatBytes(size)}</span>
        <span className={`status status-${status}`}>{STATUS_LABELS[status]}</span>
      </div>

      <div
        className="progress"
        role="progressbar"
        aria-label={`Upload of ${file.name}`}
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={percent}
        aria-valuetext={`${formatPercent(progress)}, ${formatBytes(uploaded)} of ${formatBytes(size)}`}
      >
        <div className="progress-fill" style={{ width: `${progress}%` }} />
      </div>

      <div className="row-foot">
        <span className="transfer">
          <span className="percent">{formatPercent(progress)}</span> · {formatBytes(uploaded)} of {formatBytes(size)} sent
          {rate !== undefined && (running || status === 'done') && <> · {formatSpeed(rate)}</>}
        </span>
        {running && (
          <button type="button" className="button button-small" onClick={entry.abort} aria-label={`Abort upload of ${file.name}`}>
            Abort
          </button>
        )}
      </div>

      {status === 'done' && result && (
        <p className="outcome">
          <a href={result.url} target="_blank" rel="noreferrer" className="object-url">
            {result.url}
          </a>
        </p>
      )}
      {(status === 'error' || status === 'aborted') && error && <p className="outcome error-message">{error.message}</p>}
    </li>
  )
}
