import { NetworkError, UploadAbortedError } from './errors.ts'

export interface HttpRequest {
  method: string
  url: string
  headers?: Record<string, string>
  body?: Blob | string
  signal?: AbortSignal
  /** Bytes of the body sent so far. Fetch has no upload progress: it reports once, at the end. */
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
 * or `UploadAbortedError`. Tests replace it with a step-through fake.
 */
export type Transport = (request: HttpRequest) => Promise<HttpResponse>

/** XMLHttpRequest: the only browser API that reports upload progress byte by byte. */
export const xhrTransport: Transport = (request) =>
  new Promise((resolve, reject) => {
    const { signal } = request
    if (signal?.aborted) return reject(new UploadAbortedError())
    const xhr = new XMLHttpRequest()
    const onAbort = () => xhr.abort()
    const settle = () => signal?.removeEventListener('abort', onAbort)
    xhr.open(request.method, request.url)
    for (const [name, value] of Object.entries(request.headers ?? {})) xhr.setRequestHeader(name, value)
    if (request.onProgress) {
      const report = request.onProgress
      xhr.upload.onprogress = (event) => report(event.loaded)
    }
    xhr.onload = () => {
      settle()
      request.onProgress?.(sizeOf(request.body))
      resolve({ status: xhr.status, header: (name) => xhr.getResponseHeader(name), body: xhr.responseText })
    }
    xhr.onerror = xhr.ontimeout = () => {
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

/** fetch: Node, Deno, Bun and workers, where XMLHttpRequest does not exist. */
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
  request.onProgress?.(sizeOf(request.body))
  return { status: response.status, header: (name) => response.headers.get(name), body }
}

/** Progress is only asked for on Blob bodies (objects and parts). */
const sizeOf = (body: Blob | string | undefined) => (body as Blob).size

/** Only the origin goes into messages: presigned query strings carry signatures. */
const origin = (url: string) => new URL(url, globalThis.location?.href).origin
