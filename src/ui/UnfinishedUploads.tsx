import { useEffect, useRef, useState } from 'react'
import type { ResumeRecord, ResumeUploads } from '../../engine/index.ts'
import { formatBytes } from '../format.ts'
import { ownClick } from './own-click.ts'

/** What `<UnfinishedUploads>` lists, and where a file to carry on goes. */
export interface UnfinishedUploadsProps {
  /** The `resumeUploads()` the uploads run with: its records are listed. */
  resume: ResumeUploads
  /** A file to carry on: hand it to the uploads (`addFiles([file])`); its record makes it resume. */
  onResume(file: File): void
}

/**
 * Uploads an earlier visit left unfinished (read once, when it mounts): Resume reads the file
 * again through its kept handle (Chromium's File System Access, after the person allows it) or
 * asks for it to be picked again; Discard aborts the upload on storage and forgets it.
 * `<UploadDropzone resume={resumeUploads()}>` shows it by itself.
 *
 * @example
 * ```tsx
 * <UnfinishedUploads resume={resume} onResume={(file) => uploads.addFiles([file])} />
 * ```
 */
export function UnfinishedUploads({ resume, onResume }: UnfinishedUploadsProps) {
  const [records, setRecords] = useState<ResumeRecord[]>([])
  const [failed, setFailed] = useState<Record<string, string>>({})
  const picking = useRef<ResumeRecord>(undefined)
  const input = useRef<HTMLInputElement>(null)

  useEffect(() => {
    let live = true
    resume.list().then(
      (found) => live && setRecords(found),
      () => {},
    )
    return () => {
      live = false
    }
  }, [resume])

  const drop = (record: ResumeRecord) =>
    setRecords((listed) => listed.filter((other) => other.fingerprint !== record.fingerprint))
  const carryOn = async (record: ResumeRecord) => {
    const handle = record.handle as
      | (FileSystemFileHandle & { requestPermission?(d: { mode: 'read' }): Promise<PermissionState> })
      | undefined
    try {
      if (handle && (await handle.requestPermission?.({ mode: 'read' })) !== 'denied') {
        const file = await handle.getFile()
        drop(record)
        return onResume(file)
      }
    } catch {
      // The file moved or the person said no: ask for it instead.
    }
    picking.current = record
    input.current?.click()
  }
  const discard = async (record: ResumeRecord) => {
    try {
      await resume.discard(record)
      drop(record)
    } catch (error) {
      setFailed((now) => ({ ...now, [record.fingerprint]: `Could not discard it: ${(error as Error).message}` }))
    }
  }

  if (records.length === 0) return null
  return (
    <section className="updraft-unfinished" aria-label="Unfinished uploads">
      <h3 className="updraft-unfinished-title">Unfinished uploads</h3>
      <p className="updraft-hint">
        From an earlier visit. Resume carries on from the parts already stored: pick the same file if asked.
      </p>
      <ul className="updraft-rows">
        {records.map((record) => (
          <li className="updraft-row" key={record.fingerprint} data-testid="unfinished-row">
            <div className="updraft-row-main">
              <div className="updraft-row-head">
                <span className="updraft-name" title={record.name}>
                  {record.name}
                </span>
                <span className="updraft-size">{formatBytes(record.size)}</span>
              </div>
              <p className="updraft-row-foot">
                <span className="updraft-state">
                  {record.parts.length} of {record.partCount} parts stored
                </span>
                <span className="updraft-transfer">{whatResumeSends(record)}</span>
                {failed[record.fingerprint] && <span className="updraft-message">{failed[record.fingerprint]}</span>}
              </p>
            </div>
            <div className="updraft-actions">
              <button
                type="button"
                className="updraft-button updraft-small"
                aria-label={`Resume upload of ${record.name}`}
                onClick={(event) => ownClick(event) && void carryOn(record)}
              >
                Resume
              </button>
              <button
                type="button"
                className="updraft-button updraft-small updraft-quiet"
                aria-label={`Discard upload of ${record.name}`}
                onClick={(event) => ownClick(event) && void discard(record)}
              >
                Discard
              </button>
            </div>
          </li>
        ))}
      </ul>
      <input
        ref={input}
        type="file"
        hidden
        aria-label="Pick the file to resume"
        onChange={(event) => {
          const file = event.target.files?.[0]
          event.target.value = ''
          if (!file || !picking.current) return
          drop(picking.current)
          onResume(file)
        }}
      />
    </section>
  )
}

/**
 * What Resume will do, in bytes: only whole parts are kept by storage, and a page that closed at 33%
 * of a 40 MiB upload had all of its first four parts two-thirds sent and none whole ("0 of 8 parts
 * stored", then Resume from 0, looked like lost work).
 */
function whatResumeSends({ parts, partCount, partSize, size }: ResumeRecord): string {
  if (parts.length === 0) return 'no part was whole when the page closed: Resume sends it from the start'
  const stored = parts.reduce(
    (sum, { partNumber }) => sum + (partNumber === partCount ? size - (partCount - 1) * partSize : partSize),
    0,
  )
  return `${formatBytes(stored)} of ${formatBytes(size)}: Resume sends the rest`
}
