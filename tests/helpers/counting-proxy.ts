import { type IncomingMessage, type ServerResponse, createServer, request } from 'node:http'
import type { AddressInfo } from 'node:net'

/**
 * A transparent HTTP proxy in front of a real S3 server that counts the part uploads in flight,
 * so tests can see the engine's concurrency from the server's side. It forwards the Host header
 * unchanged: the SigV4 signature covers it.
 */
export async function startCountingProxy(target: string) {
  const upstream = new URL(target)
  let inFlight = 0
  const stats = { peakPartsInFlight: 0, partRequests: 0 }
  const server = createServer((incoming: IncomingMessage, outgoing: ServerResponse) => {
    const isPart = incoming.method === 'PUT' && /[?&]partNumber=/.test(incoming.url ?? '')
    if (isPart) {
      stats.partRequests++
      stats.peakPartsInFlight = Math.max(stats.peakPartsInFlight, ++inFlight)
    }
    const forwarded = request(
      { host: upstream.hostname, port: upstream.port, method: incoming.method, path: incoming.url, headers: incoming.headers },
      (reply) => {
        outgoing.writeHead(reply.statusCode ?? 502, reply.headers)
        reply.pipe(outgoing)
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
    reset() {
      stats.peakPartsInFlight = 0
      stats.partRequests = 0
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
