import { NetworkError, UploadAbortedError } from './errors.ts'

export interface HttpRequest {
  method: string
  url: string
  headers?: Record<string, string>
  body?: Blob | string
  signal?: AbortSignal
  /**
   * Bytes of the body sent so far. Also called, with the same count, when reply bytes arrive:
   * any call tells the stall watchdog the exchange is alive. Fetch sees no upload progress and
   * never calls it.
   */
  onProgress?: (sent: number) => void
}

export interface HttpResponse {
  status: number
  /** null when absent, or hidden by CORS (a header missing from the bucket's ExposeHeaders). */
  header(name: string): string | null
  body: string
}

/**
 * One HTTP exchange. Resolves with any HTTP status; rejects only with `NetworkError` (no reply)
 * or `UploadAbortedError` (its signal aborted). The engine bounds every exchange itself (stall
 * watchdog, abort), so a transport needs no timeout of its own. Tests replace it with a
 * step-through fake.
 */
export type Transport = (request: HttpRequest) => Promise<HttpResponse>

/** XMLHttpRequest: the only browser API that reports upload progress byte by byte. */
export const xhrTransport: Transport = (request) =>
  new Promise((resolve, reject) => {
    const { signal, onProgress } = request
    if (signal?.aborted) return reject(new UploadAbortedError())
    const xhr = new XMLHttpRequest()
    const onAbort = () => xhr.abort()
    const settle = () => signal?.removeEventListener('abort', onAbort)
    let sent = 0
    xhr.open(request.method, request.url)
    for (const [name, value] of Object.entries(request.headers ?? {})) xhr.setRequestHeader(name, value)
    if (onProgress) {
      xhr.upload.onprogress = (event) => onProgress((sent = event.loaded))
      // Reply bytes (headers, S3's keep-alive whitespace during a long Complete) are progress too.
      xhr.onprogress = () => onProgress(sent)
    }
    xhr.onload = () => {
      settle()
      resolve({ status: xhr.status, header: (name) => xhr.getResponseHeader(name), body: xhr.responseText })
    }
    xhr.onerror = () => {
      settle()
      reject(new NetworkError(`Network error on ${request.method} ${origin(request.url)}`))
    }
    xhr.onabort = () => {
      settle()
      reject(new UploadAbortedError())
    }
    signal?.addEventListener('abort', onAbort, { once: true })
    xhr.send(request.body ?? null)
  })

/** fetch: workers and other runtimes without XMLHttpRequest. No upload progress. */
export const fetchTransport: Transport = async (request) => {
  let response: Response
  let body: string
  try {
    response = await fetch(request.url, {
      method: request.method,
      headers: request.headers,
      body: request.body ?? null,
      signal: request.signal ?? null,
    })
    body = await response.text()
  } catch (error) {
    if (request.signal?.aborted) throw new UploadAbortedError()
    throw new NetworkError(`Network error on ${request.method} ${origin(request.url)}`, { cause: error })
  }
  return { status: response.status, header: (name) => response.headers.get(name), body }
}

/** Only the origin goes into messages: presigned query strings carry signatures. */
export const origin = (url: string) => new URL(url, globalThis.location?.href).origin
