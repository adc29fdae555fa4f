// The page of bench/many-files.ts: makes the job's files, then uploads them with one contender and
// reports how long it took and each file's key. Contenders:
// - hook: `useS3Upload()` with its defaults (token mode asked first, verified completion), `addFiles`;
// - upload: `upload()` per file, all started at once (the engine's documented form), defaults;
// - raw: the baseline — `/batch` presigned for every file (100 per request, all asked at once), then
//   XHR PUTs, 6 in flight; no `/complete`;
// - uppy: `@uppy/aws-s3` with its defaults, signing through the one-file upload API the way its docs
//   wire a backend (`signRequest`, one call per file), no verification.

import AwsS3 from '@uppy/aws-s3'
import Uppy from '@uppy/core'
import { useEffect } from 'react'
import { createRoot } from 'react-dom/client'
import { upload } from '../../engine/index.ts'
import { useS3Upload } from '../../src/index.ts'
import { byteOf, sizeOf } from '../lib/many-files-bytes.ts'

interface Job {
  contender: 'hook' | 'upload' | 'raw' | 'uppy'
  count: number
  minBytes: number
  maxBytes: number
}

function makeFiles(job: Job): File[] {
  return Array.from({ length: job.count }, (_, i) => {
    const bytes = new Uint8Array(sizeOf(job, i))
    for (let j = 0; j < bytes.length; j++) bytes[j] = byteOf(i, j)
    return new File([bytes], `f-${i}.bin`, { type: 'application/octet-stream' })
  })
}

/** Hands every file to the hook once, on mount, and settles with their keys. */
function HookUploader({ files, done }: { files: File[]; done: (outcome: Promise<string[]>) => void }) {
  const { addFiles } = useS3Upload()
  // Once per mount: the files and the callback are fixed for the run.
  // biome-ignore lint/correctness/useExhaustiveDependencies: addFiles is read once, on mount
  useEffect(() => {
    done(
      addFiles(files).then((outcomes) => {
        const failed = outcomes.find((outcome) => outcome.status !== 'fulfilled')
        if (failed) throw new Error(`a file failed: ${String((failed as PromiseRejectedResult).reason)}`)
        return outcomes.map((outcome) => (outcome as PromiseFulfilledResult<{ key: string }>).value.key)
      }),
    )
  }, [])
  return null
}

function runHook(files: File[]): Promise<string[]> {
  return new Promise((resolve) =>
    createRoot(document.getElementById('root')!).render(<HookUploader files={files} done={resolve} />),
  )
}

const runUpload = async (files: File[]) =>
  (await Promise.all(files.map((file) => upload(file)))).map((result) => result.key)

async function runRaw(files: File[]): Promise<string[]> {
  const keys: string[] = new Array(files.length)
  const ready: Array<() => Promise<void>> = []
  const sleeping: Array<() => void> = []
  const wake = () => {
    for (const resume of sleeping.splice(0)) resume()
  }
  let asked = 0
  const chunks = Array.from({ length: Math.ceil(files.length / 100) }, (_, c) => files.slice(c * 100, c * 100 + 100))
  const asking = chunks.map(async (chunk, c) => {
    const response = await fetch('/api/s3-upload/batch', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        files: chunk.map((file) => ({
          filename: file.name,
          filetype: file.type,
          filesize: file.size,
          strategy: 'presigned',
        })),
      }),
    })
    const { files: replies } = (await response.json()) as {
      files: Array<{ url: string; key: string; headers: Record<string, string>; error?: string }>
    }
    for (const [i, reply] of replies.entries()) {
      if (reply.error) throw new Error(reply.error)
      const index = c * 100 + i
      keys[index] = reply.key
      ready.push(() => put(reply.url, reply.headers, files[index]!))
    }
    asked++
    wake()
  })
  const worker = async () => {
    for (;;) {
      const next = ready.shift()
      if (next) await next()
      else if (asked === chunks.length) return
      else await new Promise<void>((resolve) => sleeping.push(resolve))
    }
  }
  await Promise.all([...asking, ...Array.from({ length: 6 }, worker)])
  return keys
}

async function runUppy(files: File[]): Promise<string[]> {
  const keys: string[] = new Array(files.length)
  // Uppy names each object (`generateObjectKey`) and asks `signRequest` for it with the key alone:
  // the name it makes here is the file's index, so the request can carry the file's size and type.
  const uppy = new Uppy({ autoProceed: false })
  uppy.use(AwsS3, {
    generateObjectKey: (file: { meta: { index?: number } }) => String(file.meta.index),
    signRequest: async (request: { key: string; method: string }) => {
      const index = Number(request.key)
      const file = files[index]!
      const response = await fetch('/api/s3-upload', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ filename: file.name, filetype: file.type, filesize: file.size, strategy: 'presigned' }),
      })
      const reply = (await response.json()) as {
        url: string
        key: string
        headers?: Record<string, string>
        error?: string
      }
      if (reply.error) throw new Error(reply.error)
      keys[index] = reply.key
      return { url: reply.url, key: reply.key, headers: reply.headers }
    },
  } as never)
  for (const [index, file] of files.entries())
    uppy.addFile({ name: file.name, type: file.type, data: file, meta: { index } })
  const result = await uppy.upload()
  if (!result || (result.failed?.length ?? 0) > 0 || result.successful?.length !== files.length) {
    throw new Error(`uppy: ${result?.failed?.length ?? 'all'} files failed: ${String(result?.failed?.[0]?.error)}`)
  }
  return keys
}

function put(url: string, headers: Record<string, string>, file: File): Promise<void> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest()
    xhr.open('PUT', url)
    for (const [name, value] of Object.entries(headers)) xhr.setRequestHeader(name, value)
    xhr.onload = () => (xhr.status < 300 ? resolve() : reject(new Error(`PUT ${xhr.status}`)))
    xhr.onerror = () => reject(new Error('PUT network error'))
    xhr.send(file)
  })
}

declare global {
  interface Window {
    runJob(job: Job): Promise<{ seconds: number; keys: string[]; storageMs: number }>
  }
}

window.runJob = async (job) => {
  const files = makeFiles(job)
  // Every request's timing, to tell how long storage took to answer from how many went at once.
  performance.setResourceTimingBufferSize(job.count * 4)
  performance.clearResourceTimings()
  const started = performance.now()
  const run = { hook: runHook, upload: runUpload, raw: runRaw, uppy: runUppy }[job.contender]
  const keys = await run(files)
  const seconds = (performance.now() - started) / 1000
  return { seconds, keys, storageMs: medianStorageRequest() }
}

/** The median storage request (PUT or form POST, its CORS preflight included: Chromium times both as one), ms. */
function medianStorageRequest(): number {
  const times = (performance.getEntriesByType('resource') as PerformanceResourceTiming[])
    .filter((entry) => new URL(entry.name).origin !== location.origin)
    .map((entry) => entry.responseEnd - entry.startTime)
    .sort((a, b) => a - b)
  return times[Math.floor(times.length / 2)] ?? Number.NaN
}
