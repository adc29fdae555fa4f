import { useCallback, useState } from 'react'
import { DEFAULT_ENDPOINT, type Strategy } from '../../engine/index.ts'
import { type Uploader, useS3Upload } from '../../src/index.ts'
import { ModeSwitch } from './ModeSwitch.tsx'
import { UploadRow } from './UploadRow.tsx'
import { usePageDrop } from './usePageDrop.ts'
import { useServerInfo } from './useServerInfo.ts'

export interface AppProps {
  /** @default '/api/s3-upload' */
  endpoint?: string
  /** Tests replace the engine here; the page itself always uses the real one. */
  uploader?: Uploader
}

export function App({ endpoint = DEFAULT_ENDPOINT, uploader }: AppProps) {
  const server = useServerInfo(endpoint)
  const [chosenMode, setMode] = useState<Strategy>('presigned')
  // Presigned works with every server; token only where the server says it can issue tokens.
  const mode = server.state === 'ready' && !server.info.token ? 'presigned' : chosenMode
  const { FileInput, openFileDialog, uploadToS3, files, resetFiles } = useS3Upload({ endpoint, uploader })

  const start = useCallback(
    (picked: File[]) => {
      // Failures are shown in each file's row; nothing else to do with the rejection here.
      for (const file of picked) uploadToS3(file, { strategy: mode }).catch(() => {})
    },
    [uploadToS3, mode],
  )
  const dragging = usePageDrop(start)

  const running = files.filter((f) => f.status === 'queued' || f.status === 'uploading').length
  const done = files.filter((f) => f.status === 'done').length
  const failed = files.length - running - done

  return (
    <main className="page">
      <header className="page-header">
        <h1>Updraft</h1>
        <p className="tagline">Files go from this page straight to S3-compatible storage.</p>
        <p className="store">
          {server.state === 'ready' && <>Storage: <strong>{server.info.store}</strong> · </>}
          Endpoint: <code>{endpoint}</code>
        </p>
      </header>

      <ModeSwitch mode={mode} onChange={setMode} server={server} />

      <section className={`drop-zone${dragging ? ' is-dragging' : ''}`} aria-labelledby="pick-title">
        <h2 id="pick-title" className="visually-hidden">
          Choose files
        </h2>
        <p className="drop-hint">Drop files anywhere on this page, or</p>
        <button type="button" className="button button-primary" onClick={openFileDialog}>
          Choose files…
        </button>
        <FileInput multiple onChange={start} />
      </section>

      <section aria-labelledby="uploads-title" className="uploads">
        <div className="uploads-header">
          <h2 id="uploads-title">Uploads</h2>
          <p className="summary" aria-live="polite">
            {files.length === 0 ? 'Nothing uploaded yet.' : `${running} running · ${done} done · ${failed} failed or aborted`}
          </p>
          <button
            type="button"
            className="button button-small"
            onClick={resetFiles}
            disabled={files.length === 0 || running > 0}
            title={running > 0 ? 'Wait for running uploads to finish, or abort them' : undefined}
          >
            Clear list
          </button>
        </div>
        {files.length > 0 && (
          <ul className="upload-list">
            {files.map((entry) => (
              <UploadRow key={entry.id} entry={entry} />
            ))}
          </ul>
        )}
      </section>

      {dragging && (
        <div className="drop-overlay" aria-hidden="true">
          Drop to upload
        </div>
      )}
    </main>
  )
}
