// Runs inside a Chromium page (bundled per contender by bench/lib/chromium.ts): generates the
// Blob, tells the harness it is idle, uploads when told to, and posts the timing back. Driven over
// plain HTTP rather than DevTools, so the page runs without DevTools network monitoring, which
// copies every ArrayBuffer request body (ARCHITECTURE.md, "Real parts in tests").
import type { PageJob, PageResult } from '../lib/chromium.ts'

export type PageUpload = (body: Blob, job: PageJob) => Promise<void>

const MiB = 1024 * 1024

export async function runPage(upload: PageUpload): Promise<void> {
  const id = new URLSearchParams(location.search).get('id')
  const post = (path: string, body?: unknown) =>
    fetch(`/${path}?id=${id}`, { method: 'POST', body: body === undefined ? null : JSON.stringify(body) })
  try {
    const job = (await (await fetch(`/job?id=${id}`)).json()) as PageJob
    const body = job.file ? await pickedFile() : makeBody(job.size)
    // Chromium builds a Blob asynchronously, moving its bytes to the browser process after the
    // constructor returns; reading its last byte waits until that is done, so the idle baseline
    // below does not still count the transfer.
    await body.slice(-1).arrayBuffer()
    ;(globalThis as { gc?: () => void }).gc?.()
    await new Promise((resolve) => setTimeout(resolve, 500))
    await post('ready') // answered once the harness has read the idle memory
    const startedAt = Date.now()
    // How long the page could not answer: a timer due every 5 ms, and the longest it came late.
    let longestStallMs = 0
    let tick = performance.now()
    const probe = setInterval(() => {
      const now = performance.now()
      longestStallMs = Math.max(longestStallMs, now - tick - 5)
      tick = now
    }, 5)
    const start = performance.now()
    await upload(body, job)
    const seconds = (performance.now() - start) / 1000
    clearInterval(probe)
    const result: PageResult = {
      seconds,
      bytes: body.size,
      startedAt,
      longestStallMs,
      resources: job.resourceTimings ? resourcesSince(start) : undefined,
    }
    await post('result', result)
  } catch (error) {
    await post('result', { error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) })
  }
}

/** What the page fetched from `start` on (its API requests, lazy chunks, storage requests), from Resource Timing. */
function resourcesSince(start: number): PageResult['resources'] {
  return (performance.getEntriesByType('resource') as PerformanceResourceTiming[])
    .filter((entry) => entry.startTime >= start)
    .map((entry) => ({ url: entry.name, startMs: entry.startTime - start, endMs: entry.responseEnd - start }))
}

/** The file the harness sets on the page's input (bench/lib/chromium.ts, pickFile). */
function pickedFile(): Promise<Blob> {
  const input = document.getElementById('file') as HTMLInputElement
  return new Promise((resolve) => {
    const picked = () => input.files?.[0] && resolve(input.files[0])
    input.addEventListener('change', picked)
    picked()
  })
}

/** A 1 MiB pseudo-random block repeated: the Blob lives in Chromium's blob storage, not in JS. */
function makeBody(size: number): Blob {
  const block = new Uint8Array(MiB)
  for (let offset = 0; offset < MiB; offset += 65_536) crypto.getRandomValues(block.subarray(offset, offset + 65_536))
  return new Blob(Array.from({ length: Math.ceil(size / MiB) }, () => block)).slice(0, size)
}
