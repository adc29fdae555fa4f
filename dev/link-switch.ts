import { createConnection, createServer, type Socket } from 'node:net'
import type { AddressInfo } from 'node:net'

/**
 * A TCP relay in front of a real S3 server whose link can be cut: `down()` resets every
 * connection through it mid-transfer and refuses new ones, as a dropped Wi-Fi or a cable pulled
 * out does to the browser; `up()` lets traffic through again. Bytes pass unchanged (the Host
 * header the page signed for is the relay's, which is what the store checks).
 */
export async function startLinkSwitch(target: string) {
  const upstream = new URL(target)
  const sockets = new Set<Socket>()
  let isUp = true
  const server = createServer((client) => {
    if (!isUp) return void client.resetAndDestroy()
    const store = createConnection({ host: upstream.hostname, port: Number(upstream.port) })
    for (const socket of [client, store]) {
      sockets.add(socket)
      socket.on('close', () => sockets.delete(socket))
      socket.on('error', () => {
        client.destroy()
        store.destroy()
      })
    }
    client.pipe(store).pipe(client)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    down() {
      isUp = false
      for (const socket of sockets) socket.resetAndDestroy()
    },
    up() {
      isUp = true
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      }),
  }
}
