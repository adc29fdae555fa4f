'use client'

import { usePresignedUpload } from 'updraft-s3/react'

// next-s3-upload's hook, in presigned mode: the route signs every request to storage, so the
// page never holds a key. `useS3Upload` is the same hook in token mode (needs an STS).
export default function Page() {
  const { FileInput, openFileDialog, uploadToS3, files } = usePresignedUpload()

  const onFiles = (picked: File[]) => {
    for (const file of picked) uploadToS3(file).catch(() => {}) // failures show in `files`
  }

  return (
    <main>
      <FileInput multiple onChange={onFiles} />
      <button onClick={openFileDialog}>Upload files</button>
      <ul>
        {files.map((entry) => (
          <li key={entry.id} data-status={entry.status} data-key={entry.result?.key}>
            {entry.file.name}: {entry.progress}% {entry.status}
            {entry.result && <a href={entry.result.url}> {entry.result.key}</a>}
            {entry.error && <span> {entry.error.message}</span>}
          </li>
        ))}
      </ul>
    </main>
  )
}
