import { createServer, type IncomingMessage, request, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/**
 * A transparent HTTP proxy in front of a real S3 server that counts the requests it forwards and
 * the part uploads in flight, so tests can see the engine's concurrency (or that nothing reached
 * storage) from the server's side. It forwards the Host header
 * unchanged: the SigV4 signature covers it.
 */
/** The longest a part reply is held waiting for the others: then the count is what it is. */
const HOLD_MS = 5000

export async function startCountingProxy(target: string) {
  const upstream = new URL(target)
  let inFlight = 0
  const stats = {
    peakPartsInFlight: 0,
    partRequests: 0,
    requests: 0,
    /** When the first byte of an object's body arrived (ms since the epoch): a PUT's, a part's or a single object's. */
    firstBodyAt: undefined as number | undefined,
  }
  /** Every request forwarded, in arrival order: `METHOD status` once storage answered (the reply streams through, never buffered). */
  const log: Array<{ method: string; url: string; status?: number }> = []
  // Part replies are held until this many parts are in flight at once (or HOLD_MS pass), so a
  // test sees the concurrency the engine allows, not how fast a loaded machine got through it.
  let barrier = { parts: 0, reached: Promise.resolve(), open: () => {} }
  const server = createServer((incoming: IncomingMessage, outgoing: ServerResponse) => {
    stats.requests++
    const entry: (typeof log)[number] = { method: incoming.method ?? 'GET', url: incoming.url ?? '/' }
    log.push(entry)
    if (incoming.method === 'PUT') incoming.once('data', () => (stats.firstBodyAt ??= Date.now()))
    const isPart = incoming.method === 'PUT' && /[?&]partNumber=/.test(incoming.url ?? '')
    if (isPart) {
      stats.partRequests++
      stats.peakPartsInFlight = Math.max(stats.peakPartsInFlight, ++inFlight)
      if (stats.peakPartsInFlight >= barrier.parts) barrier.open()
    }
    const forwarded = request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: incoming.method,
        path: incoming.url,
        headers: incoming.headers,
      },
      async (reply) => {
        entry.status = reply.statusCode
        if (isPart) await Promise.race([barrier.reached, new Promise((resolve) => setTimeout(resolve, HOLD_MS))])
        outgoing.writeHead(reply.statusCode ?? 502, reply.headers)
        // Headers go on at once, as storage sent them, not with the first body byte (which may never come).
        outgoing.flushHeaders()
        reply.pipe(outgoing)
        // Storage dropped the connection mid-reply: so does the proxy, as a direct connection would.
        reply.on('aborted', () => outgoing.destroy())
        reply.on('end', () => {
          if (isPart) inFlight--
        })
      },
    )
    forwarded.on('error', () => outgoing.destroy())
    incoming.pipe(forwarded)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stats,
    log,
    /** Clears the counts; part replies then wait until `holdUntil` parts are in flight together (0: never). */
    reset(holdUntil = 0) {
      stats.peakPartsInFlight = 0
      stats.partRequests = 0
      stats.requests = 0
      stats.firstBodyAt = undefined
      let open = () => {}
      const reached = new Promise<void>((resolve) => (open = resolve))
      barrier = { parts: holdUntil, reached, open }
      if (holdUntil === 0) open()
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
