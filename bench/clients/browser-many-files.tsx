// The page of bench/many-files.ts: makes the job's files, then uploads them with one contender and
// reports how long it took and each file's key. Contenders:
// - hook: `useS3Upload()` with its defaults (token mode asked first, verified completion), `addFiles`;
// - upload: `upload()` per file, all started at once (the engine's documented form), defaults;
// - raw: the baseline — `/batch` presigned for every file (100 per request, all asked at once), then
//   XHR PUTs, 6 in flight; no `/complete`.
import { useEffect } from 'react'
import { createRoot } from 'react-dom/client'
import { upload } from '../../engine/index.ts'
import { useS3Upload } from '../../src/index.ts'
import { byteOf, sizeOf } from '../lib/many-files-bytes.ts'

interface Job {
  contender: 'hook' | 'upload' | 'raw'
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

async function runHook(files: File[]): Promise<string[]> {
  return new Promise((resolve, reject) => {
    function App() {
      const { addFiles } = useS3Upload()
      useEffect(() => {
        addFiles(files).then((outcomes) => {
          const failed = outcomes.find((outcome) => outcome.status !== 'fulfilled')
          if (failed) reject(new Error(`a file failed: ${String((failed as PromiseRejectedResult).reason)}`))
          else resolve(outcomes.map((outcome) => (outcome as PromiseFulfilledResult<{ key: string }>).value.key))
        }, reject)
      }, [])
      return null
    }
    createRoot(document.getElementById('root')!).render(<App />)
  })
}

const runUpload = async (files: File[]) => (await Promise.all(files.map((file) => upload(file)))).map((result) => result.key)

async function runRaw(files: File[]): Promise<string[]> {
  const keys: string[] = new Array(files.length)
  const ready: Array<() => Promise<void>> = []
  const sleeping: Array<() => void> = []
  const wake = () => sleeping.splice(0).forEach((resume) => resume())
  let asked = 0
  const chunks = Array.from({ length: Math.ceil(files.length / 100) }, (_, c) => files.slice(c * 100, c * 100 + 100))
  const asking = chunks.map(async (chunk, c) => {
    const response = await fetch('/api/s3-upload/batch', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ files: chunk.map((file) => ({ filename: file.name, filetype: file.type, filesize: file.size, strategy: 'presigned' })) }),
    })
    const { files: replies } = (await response.json()) as { files: Array<{ url: string; key: string; headers: Record<string, string>; error?: string }> }
    replies.forEach((reply, i) => {
      if (reply.error) throw new Error(reply.error)
      const index = c * 100 + i
      keys[index] = reply.key
      ready.push(() => put(reply.url, reply.headers, files[index]!))
    })
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
    runJob(job: Job): Promise<{ seconds: number; keys: string[] }>
  }
}

window.runJob = async (job) => {
  const files = makeFiles(job)
  const started = performance.now()
  const keys = await (job.contender === 'hook' ? runHook(files) : job.contender === 'upload' ? runUpload(files) : runRaw(files))
  return { seconds: (performance.now() - started) / 1000, keys }
}
