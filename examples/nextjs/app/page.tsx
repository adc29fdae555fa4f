'use client'

import { useS3Upload } from 'updraft-s3/react'

// next-s3-upload's hook. Token mode by default, as its protocol has it: with an STS the route issues
// credentials for one key; without one (R2, B2, the local store) the page is told so once and
// uploads presigned. `useS3Upload({ strategy: 'presigned' })` asks for presigned URLs from the start.
export default function Page() {
  const { FileInput, openFileDialog, uploadToS3, files } = useS3Upload()

  const onFiles = (picked: File[]) => {
    for (const file of picked) uploadToS3(file).catch(() => {}) // failures show in `files`
  }

  return (
    <main>
      <FileInput multiple onChange={onFiles} />
      {/* Styled inline: a CSS reset such as Tailwind's preflight (create-next-app's default) strips a bare button's border and background. */}
      <button
        type="button"
        onClick={openFileDialog}
        style={{
          padding: '6px 14px',
          border: '1px solid #888',
          borderRadius: 6,
          background: '#f4f4f4',
          color: '#111',
          cursor: 'pointer',
        }}
      >
        Upload files
      </button>
      <ul>
        {files.map((entry) => (
          <li key={entry.id} data-status={entry.status} data-key={entry.result?.key}>
            {entry.file.name}: {Math.round(entry.progress)}% {entry.status}
            {entry.result && <a href={entry.result.url}> {entry.result.key}</a>}
            {entry.error && <span> {entry.error.message}</span>}
          </li>
        ))}
      </ul>
    </main>
  )
}
