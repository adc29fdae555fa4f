import { useMemo, useState } from 'react'
import { resumeUploads } from '../../engine/index.ts'
import { DEFAULT_API_PATH, type Strategy } from '../../protocol/wire.ts'
import { formatBytes } from '../../src/format.ts'
import { describeLimits, useApiInfo } from '../../src/index.ts'
import { UploadDropzone } from '../../src/ui/index.ts'
import type { DemoRecord } from '../completions.ts'
import { ModeSwitch } from './ModeSwitch.tsx'

export interface AppProps {
  /** @default '/api/s3-upload' */
  api?: string
}

/** demo/completions.ts's answer, on the row: what the server recorded after it checked the object. */
function describeRecord(serverData: unknown): string | undefined {
  const record = serverData as Partial<DemoRecord> | null
  if (typeof record?.id !== 'number') return undefined
  return `Server checked and recorded it as upload #${record.id} (${formatBytes(record.size ?? 0)}, ${record.contentType})`
}

/**
 * The `npm start` page: the dropzone first (on a phone it is what the first screen shows), the
 * settings after it. One `/info` call feeds both: token mode on or off, and the limits.
 */
export function App({ api = DEFAULT_API_PATH }: AppProps) {
  const server = useApiInfo(api)
  const [chosenMode, setMode] = useState<Strategy>('token')
  // Uploads are recorded in IndexedDB: after a reload the page lists the unfinished ones.
  const resume = useMemo(() => resumeUploads(), [])
  // Token mode, the protocol's default, where the server can issue tokens; presigned works with every server.
  const mode = server.state === 'ready' && !server.info.token ? 'presigned' : chosenMode
  const limits =
    server.state === 'ready'
      ? { maxFileSize: server.info.maxFileSize, allowedTypes: server.info.allowedTypes }
      : undefined

  return (
    <div className="page">
      <header className="page-header">
        <h1>Updraft</h1>
        <p className="tagline">Files go from this page straight to S3-compatible storage.</p>
      </header>

      <div className="layout">
        <main>
          <UploadDropzone
            api={api}
            strategy={mode}
            limits={limits ?? false}
            pasteAnywhere
            describeServerData={describeRecord}
            resume={resume}
          />
        </main>

        <aside className="settings" aria-label="Settings">
          <ModeSwitch mode={mode} onChange={setMode} server={server} />
          <dl className="facts">
            <dt>Storage</dt>
            <dd>
              {server.state === 'ready'
                ? server.info.store
                : server.state === 'loading'
                  ? 'Asking the server…'
                  : 'Not told'}
            </dd>
            <dt>Upload API</dt>
            <dd>
              <code>{api}</code>
            </dd>
            <dt>Accepts</dt>
            <dd>
              {(limits && describeLimits(limits)) ?? (
                // Long variable names wrap inside themselves in a narrow column: no bracket or full stop after them to be left alone on a line.
                <>
                  Any file. Limit them with <code>UPDRAFT_MAX_FILE_SIZE</code> and <code>UPDRAFT_ALLOWED_TYPES</code>
                </>
              )}
            </dd>
          </dl>
        </aside>
      </div>
    </div>
  )
}
