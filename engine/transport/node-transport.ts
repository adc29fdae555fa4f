import type { ClientRequest, IncomingMessage } from 'node:http'
import { request as httpRequest } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { NetworkError, UploadAbortedError } from '../core/errors.ts'
import type { HttpRequest, HttpResponse, Transport } from './transport.ts'

/**
 * node:http(s), for Node only: `uploadObject(file, { ..., transport: nodeTransport })`. Nothing in
 * the browser entry imports this module, so no page bundle carries it.
 *
 * Why: Node's fetch (undici) copies Blob bodies; writing the `Blob.stream()` chunks to a
 * ClientRequest went 1.3-1.4x faster on 60% of the CPU, and a 1 GiB file upload grew the process
 * by 40 MiB instead of 103 (bench/RESULTS.md, "Node throughput" and "Memory"). It also reports
 * progress as chunks are handed to the socket, where fetch can only report once at the end.
 * Connections are reused through Node's global agent (keep-alive since Node 19). Where its CPU
 * goes, per GiB and by phase: `npx tsx bench/profile.ts` (bench/RESULTS.md, "Node at the wire's speed").
 *
 * Node already picks it by default (the `node` export condition); import it to be explicit, or
 * when a bundler resolves the engine without that condition. Rejects with `NetworkError` when no
 * reply comes, `UploadAbortedError` when the request's signal aborts.
 *
 * @example
 * ```ts
 * import { openAsBlob } from 'node:fs'
 * import { uploadObject } from 'updraft-s3'
 * import { nodeTransport } from 'updraft-s3/node-transport'
 *
 * await uploadObject(await openAsBlob('video.mp4'), { ...target, transport: nodeTransport })
 * ```
 */
export const nodeTransport: Transport = /* @__PURE__ */ Object.assign(
  (request: HttpRequest) =>
    new Promise<HttpResponse>((resolve, reject) => {
      const { signal, body } = request
      if (signal?.aborted) return reject(new UploadAbortedError())
      // A page resolves '/api/s3-upload' against its own address; Node has none to resolve it against.
      if (!URL.canParse(request.url)) {
        return reject(
          new TypeError(
            `updraft: '${request.url}' is not an absolute URL: outside a browser, give your upload API's URL in full, e.g. api: 'https://app.example.com/api/s3-upload'`,
          ),
        )
      }
      const url = new URL(request.url)
      const size =
        body === undefined
          ? 0
          : typeof body === 'string'
            ? Buffer.byteLength(body)
            : body instanceof Uint8Array
              ? body.byteLength
              : body.size
      const send = url.protocol === 'https:' ? httpsRequest : httpRequest
      const outgoing = send(url, {
        method: request.method,
        headers: { ...request.headers, 'content-length': String(size) },
      })

      let settled = false
      const finish = (outcome: () => void) => {
        if (settled) return
        settled = true
        signal?.removeEventListener('abort', onAbort)
        outcome()
      }
      const fail = (error: Error) =>
        finish(() => {
          outgoing.destroy()
          reject(error)
        })
      const onAbort = () => fail(new UploadAbortedError())
      const networkError = (cause: unknown) =>
        signal?.aborted
          ? new UploadAbortedError()
          : new NetworkError(`Network error on ${request.method} ${url.origin}`, { cause })

      signal?.addEventListener('abort', onAbort, { once: true })
      outgoing.on('error', (error) => fail(networkError(error)))
      let sent = 0
      const progressed = (bytes = sent) => request.onProgress?.((sent = bytes))
      outgoing.on('response', (incoming: IncomingMessage) => {
        const chunks: Buffer[] = []
        // Reply bytes are progress too: the stall watchdog must not cut a slow reply.
        progressed()
        incoming.on('data', (chunk: Buffer) => {
          chunks.push(chunk)
          progressed()
        })
        incoming.on('error', (error) => fail(networkError(error)))
        incoming.on('end', () =>
          finish(() =>
            resolve({
              status: incoming.statusCode ?? 0,
              header: (name) => headerOf(incoming, name),
              body: Buffer.concat(chunks).toString('utf8'),
            }),
          ),
        )
      })
      writeBody(outgoing, body, progressed).catch((error: unknown) => fail(networkError(error)))
    }),
  // Node's agent opens as many sockets as asked (maxSockets: Infinity): nothing waits inside it.
  { connections: Infinity },
)

/**
 * Writes the body with backpressure, a window of {@link BYTES_PER_WRITE} at a time: bytes as views,
 * handed to the socket without a copy; a Blob as Node reads it (a file-backed Blob,
 * `fs.openAsBlob`, reads in 64 KiB chunks, so a part of a file is never held in memory whole).
 * Small chunks are held back (corked) until a window is full, so they go out many to a syscall
 * (writev) instead of one each; the next window is read once Node has handed this one to the socket.
 */
async function writeBody(
  outgoing: ClientRequest,
  body: Blob | Uint8Array | string | undefined,
  onProgress?: (sent: number) => void,
) {
  if (typeof body !== 'object') return void outgoing.end(body)
  let sent = 0
  let held = 0
  // Leaving the loop early (the request torn down) cancels the Blob's reader.
  for await (const chunk of body instanceof Uint8Array ? views(body) : streamed(body)) {
    if (outgoing.destroyed) return
    if (held === 0) outgoing.cork()
    outgoing.write(chunk)
    held += chunk.byteLength
    sent += chunk.byteLength
    onProgress?.(sent)
    if (held < BYTES_PER_WRITE) continue
    outgoing.uncork()
    held = 0
    if (outgoing.writableLength > 0) await drained(outgoing)
  }
  if (held > 0) outgoing.uncork()
  outgoing.end()
}

/**
 * A window: progress (and the stall watchdog) hear of each, so on a slow link it must take well
 * under `stallTimeout` to send (1 MiB at 1 Mbit/s: 8 s).
 */
const BYTES_PER_WRITE = 1024 * 1024

function* views(bytes: Uint8Array) {
  for (let at = 0; at < bytes.byteLength; at += BYTES_PER_WRITE) yield bytes.subarray(at, at + BYTES_PER_WRITE)
}

/**
 * A Blob's stream, its chunks cut to views of a window at most: an in-memory Blob made of one
 * large buffer streams a part as one chunk, which written whole would leave progress silent, and
 * the stall watchdog blind, until the whole part had left.
 */
async function* streamed(blob: Blob) {
  for await (const chunk of blob.stream() as unknown as AsyncIterable<Uint8Array>) yield* views(chunk)
}

/** 'drain', or 'close' when the request is torn down meanwhile (its 'error' is handled elsewhere). */
const drained = (outgoing: ClientRequest) =>
  new Promise<void>((resolve) => {
    const done = () => {
      outgoing.off('drain', done)
      outgoing.off('close', done)
      resolve()
    }
    outgoing.once('drain', done)
    outgoing.once('close', done)
  })

const headerOf = (incoming: IncomingMessage, name: string) => {
  const value = incoming.headers[name.toLowerCase()]
  return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value
}
