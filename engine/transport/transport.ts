import { onAbort } from '../core/callback.ts'
import { NetworkError, UploadAbortedError } from '../core/errors.ts'
import type { Transport } from '../core/http.ts'

export type { HttpRequest, HttpResponse, Transport } from '../core/http.ts'

/**
 * XMLHttpRequest, the default in browsers: the only browser API that reports upload progress byte
 * by byte. Rejects with `NetworkError` when no reply comes (offline, CORS, an abort it did not
 * ask for), `UploadAbortedError` when the request's signal aborts.
 */
export const xhrTransport: Transport = (request) =>
  new Promise((resolve, reject) => {
    const { signal, onProgress } = request
    if (signal?.aborted) return reject(new UploadAbortedError())
    const xhr = new XMLHttpRequest()
    let settle: () => void
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
    // An abort this request's signal did not ask for (the page's window.stop(), a browser cancelling
    // requests as it unloads) is a lost request, retried, never the caller's abort: that would
    // send AbortMultipartUpload and destroy an upload a reload can carry on.
    xhr.onerror = xhr.onabort = () => {
      settle()
      reject(
        signal?.aborted
          ? new UploadAbortedError()
          : new NetworkError(`Network error on ${request.method} ${origin(request.url)}`),
      )
    }
    settle = onAbort(signal, () => xhr.abort())
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
