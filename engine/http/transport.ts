import { NetworkError, UploadAbortedError } from '../errors.ts'

/** One HTTP request the engine asks a {@link Transport} to make: to storage, or to the endpoint. */
export interface HttpRequest {
  method: string
  /** Absolute, or relative to the page for the endpoint. */
  url: string
  /** Lower-case names, already signed where storage checks a signature: send them as they are. */
  headers?: Record<string, string>
  /** A part or the whole body (a `Blob`, or a `Uint8Array` view: send it as it is), or an XML or JSON text. */
  body?: Blob | Uint8Array | string
  /** Aborts the exchange: reject with `UploadAbortedError`. */
  signal?: AbortSignal
  /**
   * Bytes of the body sent so far. Also called, with the same count, when reply bytes arrive:
   * any call tells the stall watchdog the exchange is alive. Fetch sees no upload progress and
   * never calls it.
   */
  onProgress?: (sent: number) => void
}

/** What a {@link Transport} resolves with: any HTTP status, the engine decides what it means. */
export interface HttpResponse {
  status: number
  /** null when absent, or hidden by CORS (a header missing from the bucket's ExposeHeaders). */
  header(name: string): string | null
  /** The whole reply body as text (S3's XML, the endpoint's JSON). */
  body: string
}

/**
 * One HTTP exchange. Resolves with any HTTP status; rejects only with `NetworkError` (no reply)
 * or `UploadAbortedError` (its signal aborted). The engine bounds every exchange itself (stall
 * watchdog, abort), so a transport needs no timeout of its own. Tests replace it with a
 * step-through fake.
 */
export type Transport = (request: HttpRequest) => Promise<HttpResponse>

/**
 * XMLHttpRequest, the default in browsers: the only browser API that reports upload progress byte
 * by byte. Rejects with `NetworkError` when no reply comes (offline, CORS), `UploadAbortedError`
 * when the request's signal aborts.
 */
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
    xhr.send((request.body ?? null) as XMLHttpRequestBodyInit | null)
  })

/**
 * fetch, the default in workers and other runtimes without XMLHttpRequest or node:http. It sees
 * no upload progress, so `onProgress` moves once a body is sent and `stallTimeout` bounds the
 * whole request. Rejects with `NetworkError` when no reply comes, `UploadAbortedError` when the
 * request's signal aborts.
 */
export const fetchTransport: Transport = async (request) => {
  let response: Response
  let body: string
  try {
    response = await fetch(request.url, {
      method: request.method,
      headers: request.headers,
      body: (request.body ?? null) as BodyInit | null,
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
