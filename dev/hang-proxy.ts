import type { AddressInfo } from 'node:net'
import { connect, createServer, type Socket } from 'node:net'

/**
 * A TCP proxy in front of a real server that can go silent: while `hanging`, it accepts each new
 * connection and never answers (nor forwards), as a credentials source, an STS or a store that
 * stopped answering does; otherwise it passes bytes through both ways. Connections opened while
 * silent stay silent.
 */
export interface HangProxy {
  /** `http://127.0.0.1:PORT` */
  origin: string
  hanging: boolean
  /** Connections it held silent so far. */
  held: number
  stop(): Promise<void>
}

export async function startHangProxy(target: string): Promise<HangProxy> {
  const { hostname, port } = new URL(target)
  const sockets = new Set<Socket>()
  const proxy: HangProxy = { origin: '', hanging: false, held: 0, stop }
  const server = createServer((client) => {
    sockets.add(client)
    client.on('close', () => sockets.delete(client))
    client.on('error', () => {})
    if (proxy.hanging) {
      proxy.held++
      return // read nothing back, answer nothing
    }
    const upstream = connect(Number(port), hostname)
    sockets.add(upstream)
    upstream.on('close', () => sockets.delete(upstream))
    upstream.on('error', () => client.destroy())
    client.on('error', () => upstream.destroy())
    client.pipe(upstream).pipe(client)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  proxy.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  function stop() {
    for (const socket of sockets) socket.destroy()
    return new Promise<void>((resolve) => server.close(() => resolve()))
  }
  return proxy
}
