import type { AddressInfo } from 'node:net'
import { createConnection, createServer, type Socket } from 'node:net'

/**
 * A TCP relay in front of a real S3 server whose link can be cut: `down()` resets every
 * connection through it mid-transfer and refuses new ones, as a dropped Wi-Fi or a cable pulled
 * out does to the browser; `up()` lets traffic through again. Bytes pass unchanged (the Host
 * header the page signed for is the relay's, which is what the store checks).
 *
 * `uploadBytesPerSecond` makes it a slow uplink shared by every connection (page → store only),
 * in any browser: Firefox has no DevTools throttling, and a user-space relay is what this machine
 * has (no netem). Bytes the relay holds back stop it reading, so the browser's own send buffer
 * fills and its upload progress follows the link, as on a real slow line.
 */
export async function startLinkSwitch(
  target: string,
  { uploadBytesPerSecond }: { uploadBytesPerSecond?: number } = {},
) {
  const upstream = new URL(target)
  const sockets = new Set<Socket>()
  const uplink = uploadBytesPerSecond ? slowLink(uploadBytesPerSecond) : undefined
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
    if (uplink) uplink(client, store)
    else client.pipe(store)
    store.pipe(client)
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
    /** A slow link's new speed (bytes per second; Infinity lifts the cap). */
    setUploadRate(bytesPerSecond: number) {
      if (!uplink) throw new Error('startLinkSwitch: pass uploadBytesPerSecond to make a slow link')
      uplink.rate = bytesPerSecond
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      }),
  }
}

/** How far ahead of the link the relay may read (ms of transfer queued) before it stops reading. */
const QUEUED_MS = 50

/** One uplink of `bytesPerSecond` for every connection: each chunk leaves when the link is free, in order. */
function slowLink(bytesPerSecond: number) {
  let freeAt = 0
  const paused = new Set<Socket>()
  const link: { (client: Socket, store: Socket): void; rate: number } = (client, store) => {
    // One queue and one timer per connection: timers of different delays that fall due together
    // fire in no set order, and chunks sent out of order corrupted the stored object.
    const queue: Array<{ at: number; chunk?: Buffer }> = []
    let timer: ReturnType<typeof setTimeout> | undefined
    const pump = () => {
      timer = undefined
      const now = performance.now()
      while (queue.length > 0 && queue[0]!.at <= now) {
        const { chunk } = queue.shift()!
        if (store.destroyed) continue
        if (chunk) store.write(chunk)
        else store.end()
      }
      if (queue.length > 0) timer = setTimeout(pump, queue[0]!.at - now)
      if (freeAt - now > QUEUED_MS) return
      for (const socket of paused) socket.resume()
      paused.clear()
    }
    const send = (chunk?: Buffer) => {
      const now = performance.now()
      freeAt = Math.max(now, freeAt) + ((chunk?.length ?? 0) / link.rate) * 1000
      queue.push({ at: freeAt, chunk })
      if (timer === undefined) timer = setTimeout(pump, freeAt - now)
      if (freeAt - now > QUEUED_MS) {
        client.pause()
        paused.add(client)
      }
    }
    client.on('data', (chunk: Buffer) => send(chunk))
    client.on('end', () => send())
    client.on('close', () => paused.delete(client))
  }
  link.rate = bytesPerSecond
  return link
}
