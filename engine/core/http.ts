// What a transport is: the engine's one HTTP exchange, whatever makes it (XHR, fetch, node:http,
// a test's step-through fake). Types only, so the errors and every transport can name them.

/** One HTTP request the engine asks a {@link Transport} to make: to storage, or to the upload API. */
export interface HttpRequest {
  method: string
  /** Absolute, or relative to the page for the upload API. */
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
  /** The whole reply body as text (S3's XML, the upload API's JSON). */
  body: string
}

/**
 * One HTTP exchange. Resolves with any HTTP status; rejects only with `NetworkError` (no reply)
 * or `UploadAbortedError` (its signal aborted). The engine bounds every exchange itself (stall
 * watchdog, abort), so a transport needs no timeout of its own. Tests replace it with a
 * step-through fake.
 */
export type Transport = ((request: HttpRequest) => Promise<HttpResponse>) & {
  /**
   * Requests to one origin the runtime under this transport sends at once: a browser's 6 per host
   * on HTTP/1.1 (what AWS S3 and R2 speak), a Worker's 6 connections. The engine keeps the rest
   * in its own queue rather than let them wait inside the runtime, where the stall watchdog would
   * count the wait as a stall and send them again. A transport of your own that is not limited so
   * (Node's agent) sets `Infinity`, as `nodeTransport` does. @default 6
   */
  connections?: number
}
