import { createServer, request as forward, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'

/**
 * What the proxy can do to one request, the way a flaky network and a throttling store behave.
 * Status faults answer in the proxy's name (storage never sees the request), except where noted.
 */
export const FAULTS = {
  /** Connection reset before any of the request is read. */
  'reset-before': 'any',
  /** Reset once about half the request body has arrived. */
  'reset-during': 'any',
  /** The whole body arrives, then the connection is reset (never forwarded). */
  'reset-after': 'any',
  /** Forwarded and answered by storage; the reply is lost (reset): the request took effect. */
  'lose-reply': 'any',
  /** No answer at all; the connection stays open. */
  stall: 'any',
  /** Forwarded; the reply's headers and half its body are sent, then silence. */
  'stall-mid-reply': 'any',
  '500': 'any',
  /** 503 SlowDown with `Retry-After: 0`. */
  '503-slow-down': 'any',
  '429': 'any',
  '408': 'any',
  /** S3's 400 RequestTimeout. */
  '400-request-timeout': 'storage',
  /** 400 ExpiredToken: the credentials (token mode) or the URL are no longer accepted. */
  '400-expired-token': 'storage',
  /** A bare 403, as RGW answers an expired presigned URL. */
  '403-denied': 'storage',
  /** Forwarded; the ETag header is removed from the reply. */
  'drop-etag': 'storage-put',
  /** 200 whose body is an `<Error>` (CompleteMultipartUpload can fail after its headers). */
  '200-error': 'storage-complete',
  /**
   * Forwarded with the middle byte of the body flipped: damage on the way that TCP did not catch.
   * Only storage checking a checksum the request carries can tell; without one the damage is
   * stored, so the campaign (which sends none) never draws it.
   */
  'flip-byte': 'checksummed-put',
} as const

export type Fault = keyof typeof FAULTS

/** One request as the proxy saw it, in arrival order. */
export interface LoggedRequest {
  step: string
  /** Path and query as received. */
  url: string
  fault?: Fault
  /** Storage's status, once it answered a forwarded request (undefined: not forwarded, or cut short). */
  status?: number
  /** Body bytes the proxy received from the client. */
  bytes: number
  /** performance.now() when the proxy received the request, and when storage answered it. */
  receivedAt: number
  answeredAt?: number
  /** When the exchange ended for the client, answered or cut short: until then, storage may still take the request. */
  closedAt?: number
}

/** What the fault policy sees of a request. */
export interface ProxiedRequest {
  method: string
  /** Path and query as received. */
  url: string
  /** `PUT ?partNumber`, `POST ?uploads`, `POST ?uploadId`, `DELETE ?uploadId`, `PUT`, or an upload API route (`POST /parts`…). */
  step: string
  headers: IncomingMessage['headers']
  /** Sent by the AWS SDK (the upload API's own calls to storage and STS), by its user agent. */
  fromSdk: boolean
}

export interface FaultProxyOptions {
  /** The server to forward to: `http://127.0.0.1:PORT`. */
  target: string
  /** `storage` (S3 XML errors) or `api` (the upload API's JSON and plain-text replies). */
  kind: 'storage' | 'api'
  /** Called for every request; a fault to inject, or undefined to forward it untouched. */
  decide?: (request: ProxiedRequest) => Fault | undefined
  /**
   * Ask `decide` about the AWS SDK's requests too (the upload API's own CreateMultipartUpload, say).
   * @default false: they pass untouched
   */
  sdk?: boolean
  /**
   * Milliseconds to hold a request before handling it (its fault, or forwarding it), as a slow or
   * congested path does; undefined or 0 handles it at once. A request whose client gave up
   * meanwhile is dropped, never forwarded.
   */
  hold?: (request: ProxiedRequest) => number | undefined
  /**
   * Milliseconds by which the last 64 KiB of a request's body reach the server late, as bytes
   * still in the network do: the rest is forwarded at once, the tail after this long, whether or
   * not the client has given up meanwhile (storage then finishes a request its client cancelled).
   */
  lateTail?: (request: ProxiedRequest) => number | undefined
}

/**
 * A real HTTP proxy on loopback in front of a real server (s3rver, Ceph RGW, or the upload
 * API), injecting faults per request as `decide` says. It forwards the Host header unchanged,
 * which SigV4 signatures cover. Requests from the AWS SDK (the upload API's own calls to storage
 * and STS) pass untouched unless `sdk` says otherwise: the faults are the page's network, not the server's.
 */
export async function startFaultProxy({
  target,
  kind,
  decide = () => undefined,
  sdk = false,
  hold,
  lateTail,
}: FaultProxyOptions) {
  const upstream = new URL(target)
  const sockets = new Set<Socket>()
  const stats = { requests: 0, faults: {} as Partial<Record<Fault, number>> }
  /** Every request, page's and SDK's alike, so a test can count what went to storage. */
  const log: LoggedRequest[] = []

  const server = createServer((incoming, outgoing) => {
    const step = stepOf(kind, incoming)
    const fromSdk = /aws-sdk/.test(String(incoming.headers['user-agent'] ?? ''))
    const seen: ProxiedRequest = {
      method: incoming.method ?? 'GET',
      url: incoming.url ?? '/',
      step,
      headers: incoming.headers,
      fromSdk,
    }
    const fault = fromSdk && !sdk ? undefined : decide(seen)
    stats.requests++
    if (fault) stats.faults[fault] = (stats.faults[fault] ?? 0) + 1
    const entry: LoggedRequest = { step, url: incoming.url ?? '/', fault, bytes: 0, receivedAt: performance.now() }
    log.push(entry)
    incoming.on('data', (chunk: Buffer) => (entry.bytes += chunk.length))
    outgoing.on('close', () => (entry.closedAt = performance.now()))
    const late = fromSdk ? 0 : (lateTail?.(seen) ?? 0)
    if (late > 0) return forwardWithLateTail(incoming, outgoing, entry, late)
    const held = fromSdk && !sdk ? 0 : (hold?.(seen) ?? 0)
    if (held <= 0) return inject(fault, incoming, outgoing, entry)
    incoming.pause()
    setTimeout(() => {
      if (incoming.socket.destroyed) return
      incoming.resume()
      inject(fault, incoming, outgoing, entry)
    }, held)
  })

  function inject(fault: Fault | undefined, incoming: IncomingMessage, outgoing: ServerResponse, entry: LoggedRequest) {
    const reset = () => incoming.socket.destroy()
    switch (fault) {
      case 'reset-before':
        return reset()
      case 'reset-during': {
        const declared = Number(incoming.headers['content-length'] ?? 0)
        let received = 0
        if (declared === 0) return reset()
        return incoming.on('data', (chunk: Buffer) => {
          received += chunk.length
          if (received >= declared / 2) reset()
        })
      }
      case 'reset-after':
        return readAll(incoming).then(reset)
      case 'stall':
        // Read the body (so the client is not blocked by backpressure) and never answer.
        return void readAll(incoming)
      case 'lose-reply':
        return pass(incoming, outgoing, () => reset())
      case 'stall-mid-reply':
        return pass(incoming, outgoing, (status, headers, body) => {
          outgoing.writeHead(status, headers)
          outgoing.flushHeaders()
          outgoing.write(body.subarray(0, Math.floor(body.length / 2)))
        })
      case 'flip-byte':
        return pass(
          incoming,
          outgoing,
          (status, headers, body) => outgoing.writeHead(status, headers).end(body),
          entry,
          flipMiddleByte(incoming),
        )
      case 'drop-etag':
        return pass(incoming, outgoing, (status, headers, body) => {
          delete headers.etag
          outgoing.writeHead(status, headers).end(body)
        })
      case undefined:
        return pass(incoming, outgoing, (status, headers, body) => outgoing.writeHead(status, headers).end(body), entry)
      default:
        return readAll(incoming).then(() => answer(kind, fault, outgoing))
    }
  }

  /** See `lateTail`: the body's last 64 KiB go `ms` late, and the server's request is never cut short. */
  function forwardWithLateTail(incoming: IncomingMessage, outgoing: ServerResponse, entry: LoggedRequest, ms: number) {
    const TAIL = 64 * 1024
    const upstreamRequest = forward(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: incoming.method,
        path: incoming.url,
        headers: incoming.headers,
      },
      (answer) => {
        readAll(answer).then((body) => {
          entry.status = answer.statusCode
          entry.answeredAt = performance.now()
          if (!outgoing.destroyed) outgoing.writeHead(answer.statusCode ?? 502, { ...answer.headers }).end(body)
        })
      },
    )
    upstreamRequest.on('error', () => incoming.socket.destroy())
    readAll(incoming).then((body) => {
      const cut = Math.max(0, body.length - TAIL)
      upstreamRequest.write(body.subarray(0, cut))
      setTimeout(() => upstreamRequest.end(body.subarray(cut)), ms)
    })
  }

  /** Forwards the request; `reply` decides what the client gets of storage's answer. */
  function pass(
    incoming: IncomingMessage,
    outgoing: ServerResponse,
    reply: (status: number, headers: Record<string, string | string[] | undefined>, body: Buffer) => void,
    entry?: LoggedRequest,
    alter?: (chunk: Buffer, offset: number) => void,
  ) {
    let answered = false
    const upstreamRequest = forward(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: incoming.method,
        path: incoming.url,
        headers: incoming.headers,
      },
      (answer) => {
        readAll(answer).then((body) => {
          answered = true
          if (entry) {
            entry.status = answer.statusCode
            entry.answeredAt = performance.now()
          }
          reply(answer.statusCode ?? 502, { ...answer.headers }, body)
        })
      },
    )
    upstreamRequest.on('error', () => incoming.socket.destroy())
    // A client that goes away mid-request (the engine cancelled it) resets the server's side too,
    // as a direct connection would: a half-sent request must not hold the store waiting for bytes.
    outgoing.on('close', () => {
      if (!answered) upstreamRequest.destroy()
    })
    let offset = 0
    if (alter) {
      incoming.on('data', (chunk: Buffer) => {
        alter(chunk, offset)
        offset += chunk.length
      })
    }
    incoming.pipe(upstreamRequest)
  }

  server.on('connection', (socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    /** The proxy's origin: use it wherever the target's would go. */
    url: address,
    stats,
    log,
    stop: () =>
      new Promise<void>((resolve) => {
        // Stalled exchanges hold their sockets open on purpose: end them all.
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      }),
  }
}

export type FaultProxy = Awaited<ReturnType<typeof startFaultProxy>>

/** Which faults make sense for a request: no ETag to drop on a DELETE, no Complete `<Error>` on a part. */
export function faultsFor(kind: 'storage' | 'api', step: string): Fault[] {
  return (Object.entries(FAULTS) as Array<[Fault, string]>)
    .filter(([, scope]) => {
      if (scope === 'any') return true
      if (kind !== 'storage') return false
      if (scope === 'storage') return true
      if (scope === 'checksummed-put') return false
      if (scope === 'storage-put') return step === 'PUT' || step === 'PUT ?partNumber'
      return step === 'POST ?uploadId'
    })
    .map(([fault]) => fault)
}

function stepOf(kind: 'storage' | 'api', incoming: IncomingMessage): string {
  const url = new URL(incoming.url ?? '/', 'http://proxy')
  const method = incoming.method ?? 'GET'
  if (kind === 'api') {
    const last = url.pathname.replace(/\/+$/, '').split('/').pop()
    return `${method} /${['parts', 'complete', 'abort', 'refresh', 'duplicates', 'info', 'list-parts'].includes(last!) ? last : ''}`
  }
  for (const marker of ['uploads', 'partNumber', 'uploadId'])
    if (url.searchParams.has(marker)) return `${method} ?${marker}`
  return method
}

/** What the proxy answers in the server's name. */
function answer(kind: 'storage' | 'api', fault: Fault, outgoing: ServerResponse) {
  const [status, code, message] = STATUS_FAULTS[fault as keyof typeof STATUS_FAULTS]
  const headers: Record<string, string> = fault === '503-slow-down' ? { 'retry-after': '0' } : {}
  if (kind === 'api') {
    // A fault between page and upload API: a proxy's or the handler's plain-text failure.
    outgoing.writeHead(status, { ...headers, 'content-type': 'text/plain' }).end(message)
    return
  }
  const xml = `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${message}</Message><RequestId>fault-proxy</RequestId></Error>`
  outgoing.writeHead(status, { ...headers, 'content-type': 'application/xml' }).end(fault === '403-denied' ? '' : xml)
}

const STATUS_FAULTS = {
  '500': [500, 'InternalError', 'We encountered an internal error. Please try again.'],
  '503-slow-down': [503, 'SlowDown', 'Please reduce your request rate.'],
  '429': [429, 'TooManyRequests', 'Too many requests'],
  '408': [408, 'RequestTimeout', 'Request timeout'],
  '400-request-timeout': [
    400,
    'RequestTimeout',
    'Your socket connection to the server was not read from or written to within the timeout period.',
  ],
  '400-expired-token': [400, 'ExpiredToken', 'The provided token has expired.'],
  '403-denied': [403, 'AccessDenied', ''],
  '200-error': [200, 'InternalError', 'We encountered an internal error. Please try again.'],
} as const

/** Flips every bit of the body's middle byte as it passes (Content-Length unchanged). */
function flipMiddleByte(incoming: IncomingMessage) {
  const middle = Math.floor(Number(incoming.headers['content-length'] ?? 0) / 2)
  return (chunk: Buffer, offset: number) => {
    if (middle >= offset && middle < offset + chunk.length) chunk[middle - offset]! ^= 0xff
  }
}

function readAll(stream: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = []
    stream.on('data', (chunk: Buffer) => chunks.push(chunk))
    stream.on('end', () => resolve(Buffer.concat(chunks)))
    // A client that gives up (the engine's stall watchdog) closes the stream without 'end'.
    stream.on('error', () => resolve(Buffer.concat(chunks)))
    stream.on('close', () => resolve(Buffer.concat(chunks)))
  })
}

/** The part number of a logged `PUT ?partNumber`. */
export const partNumberOf = (entry: LoggedRequest) =>
  Number(new URL(entry.url, 'http://x').searchParams.get('partNumber'))

/** Bytes sent again for parts storage had already accepted (200) earlier: the goal is 0. */
export function resentFinishedBytes(puts: LoggedRequest[]): number {
  const finished = new Set<number>()
  let resent = 0
  for (const put of puts) {
    if (finished.has(partNumberOf(put))) resent += put.bytes
    if (put.status === 200) finished.add(partNumberOf(put))
  }
  return resent
}
