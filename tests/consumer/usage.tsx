// How users call Updraft, type-checked under `strict` against the installed package's .d.ts
// (tests/package-consumer.test.ts copies this file into a fresh project). Not run: the upload
// paths run for real in the same test and in the examples' tests.
import Fastify from 'fastify'
import { isUploadError, S3Error, type UploadResult, upload, uploadObject } from 'updraft-s3'
import s3Upload from 'updraft-s3/fastify'
import { nodeTransport } from 'updraft-s3/node-transport'
import { uploadPresigned } from 'updraft-s3/presigned'
import { errorMessage, type UploadEntry, useS3Dropzone, useS3Upload } from 'updraft-s3/react'
import { UploadDropzone } from 'updraft-s3/react/ui'
import { createUploadHandler } from 'updraft-s3/server'
import { sseCustomerKey } from 'updraft-s3/sse-c'
import { taggingHeaders } from 'updraft-s3/tags'
import { uploadWithToken } from 'updraft-s3/token'

export async function fromAPage(file: File, signal: AbortSignal): Promise<string> {
  try {
    const result: UploadResult = await upload(file, {
      strategy: 'presigned',
      signal,
      onProgress: ({ loaded, total }) => void (loaded / total),
    })
    return result.url
  } catch (error) {
    if (error instanceof S3Error) return `${error.code} ${error.status}`
    if (isUploadError(error)) return error.message
    throw error
  }
}

export const leaner = (file: File) => Promise.all([uploadWithToken(file), uploadPresigned(file, { api: '/uploads' })])

export const withCredentials = (blob: Blob) =>
  uploadObject(blob, {
    bucket: 'uploads',
    key: 'cats/1.jpg',
    region: 'us-east-1',
    endpoint: 'http://127.0.0.1:9000',
    forcePathStyle: true,
    credentials: { accessKeyId: 'key', secretAccessKey: 'secret' },
    transport: nodeTransport,
    ...sseCustomerKey(new Uint8Array(32)),
    ...taggingHeaders({ project: 'cats' }),
  })

export function Picker() {
  const { FileInput, openFileDialog, uploadToS3, files } = useS3Upload()
  return (
    <div>
      <FileInput onChange={(file) => file && void uploadToS3(file)} />
      <button type="button" onClick={openFileDialog}>
        Upload
      </button>
      {files.map((entry) => (
        <p key={entry.id}>{`${entry.file.name} ${entry.progress}% ${entry.status} ${entry.result?.url ?? ''}`}</p>
      ))}
    </div>
  )
}

// A React page takes the hooks from `updraft-s3/react` and the engine's errors and results from
// `updraft-s3`: each name has one entry.
export function TokenDropzone({ onStored }: { onStored(result: UploadResult): void }) {
  const { getRootProps, getInputProps, open, files } = useS3Dropzone({
    strategy: 'token',
    limits: { maxFileSize: 1024 },
  })
  const say = (entry: UploadEntry) =>
    entry.error instanceof S3Error
      ? entry.error.code
      : entry.error
        ? errorMessage(entry.error, { file: entry.file })
        : entry.status
  return (
    <div {...getRootProps()}>
      <input {...getInputProps()} />
      <button type="button" onClick={open}>
        Choose files
      </button>
      {files.map((entry) => (
        <p key={entry.id}>{say(entry)}</p>
      ))}
      <UploadDropzone title="Or here" onUploadComplete={(result) => onStored(result)} />
    </div>
  )
}

export const handle: (request: Request) => Promise<Response> = createUploadHandler({
  bucket: 'uploads',
  region: 'us-east-1',
  allowedTypes: ['image/*'],
  maxFileSize: 10 * 1024 * 1024,
  authorize: (request) => request.headers.has('authorization'),
})

export async function onFastify() {
  const app = Fastify()
  await app.register(s3Upload, { prefix: '/api/s3-upload', bucket: 'uploads' })
  return app
}
