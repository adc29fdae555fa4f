// The user-space link of bench/lib/link.ts: what it must never get wrong is the bytes and their
// order; its timing is a lower bound (a link can be slower than configured on a loaded machine,
// never faster). Its calibration (rate within a few percent) is a benchmark: `npm run bench -- network`.
import { createHash, randomBytes } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import { connect, createServer, type Server } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { createLink, type Link, type LinkProfile, mbit } from '../bench/lib/link.ts'

/** A TCP echo server that answers each connection's bytes with their SHA-256 after the client ends. */
async function hashServer(): Promise<Server> {
  const server = createServer({ allowHalfOpen: true }, (socket) => {
    const hash = createHash('sha256')
    socket.on('data', (data) => hash.update(data))
    socket.on('end', () => socket.end(hash.digest('hex')))
    socket.on('error', () => {}) // the reset test resets it
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return server
}

/** Sends `body` through `port`, returns the reply and when its first and last reply byte came. */
function exchange(port: number, body: Buffer): Promise<{ reply: string; openedAt: number; repliedAt: number }> {
  return new Promise((resolve, reject) => {
    const openedAt = performance.now()
    let reply = ''
    const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true }, () => socket.end(body))
    socket.on('data', (data) => (reply += data))
    socket.on('end', () => resolve({ reply, openedAt, repliedAt: performance.now() }))
    socket.on('error', reject)
  })
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex')

let link: Link | undefined
let server: Server | undefined
afterEach(async () => {
  await link?.close()
  server?.close()
})

async function through(profile: LinkProfile) {
  server = await hashServer()
  link = createLink(profile)
  return link.proxy(`127.0.0.1:${(server.address() as AddressInfo).port}`)
}

describe('the emulated link', () => {
  it('delivers every byte in order, both ways, over concurrent connections sharing the line', async () => {
    const proxy = await through({ name: 'test', upBytesPerSecond: mbit(400), delayMs: 2, jitterMs: 3 })
    const bodies = Array.from({ length: 4 }, (_, i) => randomBytes(700_000 + i * 12_345))
    const replies = await Promise.all(bodies.map((body) => exchange(proxy.port, body)))
    expect(replies.map((r) => r.reply)).toEqual(bodies.map(sha256))
    expect(link!.upBytes).toBe(bodies.reduce((sum, body) => sum + body.length, 0))
  })

  it('costs at least a handshake, the bytes at the line rate and a round trip before the reply', async () => {
    const profile = { name: 'test', upBytesPerSecond: mbit(80), delayMs: 20 }
    const proxy = await through(profile)
    const body = randomBytes(1_000_000)
    const { reply, openedAt, repliedAt } = await exchange(proxy.port, body)
    expect(reply).toBe(sha256(body))
    const floorMs = 2 * profile.delayMs + (1000 * body.length) / profile.upBytesPerSecond + 2 * profile.delayMs
    expect(repliedAt - openedAt).toBeGreaterThanOrEqual(floorMs - 1)
  })

  it('holds bytes through an outage and delivers them intact after it', async () => {
    const profile = { name: 'test', upBytesPerSecond: mbit(100), delayMs: 1, outage: { everyMs: 400, durationMs: 300 } }
    const proxy = await through(profile)
    const body = randomBytes(3_000_000)
    const { reply, openedAt, repliedAt } = await exchange(proxy.port, body)
    expect(reply).toBe(sha256(body))
    // 240 ms of line time cannot fit into the first 100 ms window: at least one outage is sat out.
    expect(repliedAt - openedAt).toBeGreaterThanOrEqual(profile.outage.durationMs)
  })

  it('starts its outage schedule again at every reset, and says how long it was down in a window', async () => {
    const outage = { everyMs: 1000, durationMs: 300, firstAtMs: 200 }
    const proxy = await through({ name: 'test', upBytesPerSecond: mbit(100), delayMs: 1, outage })
    const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
    await wait(250)
    link!.reset()
    const resetAt = performance.timeOrigin + performance.now()
    // 250 ms after the reset the link is in its first drop again (200-500 ms): bytes wait for its
    // end. Without the restart, that moment is 500 ms or more after creation, past the drop.
    await wait(250)
    const body = randomBytes(10_000)
    const { reply } = await exchange(proxy.port, body)
    const repliedAt = performance.timeOrigin + performance.now()
    expect(reply).toBe(sha256(body))
    expect(repliedAt - resetAt).toBeGreaterThanOrEqual(outage.firstAtMs + outage.durationMs)
    // Down 200-500 ms and 1200-1500 ms after the reset (each window's edges cancel the few
    // microseconds between the reset and resetAt).
    expect(link!.downtimeMs(resetAt, resetAt + 150)).toBe(0)
    expect(link!.downtimeMs(resetAt, resetAt + 1_000)).toBeCloseTo(300, 0)
    expect(link!.downtimeMs(resetAt + 400, resetAt + 1_300)).toBeCloseTo(200, 0)
    expect(link!.downtimeMs(resetAt, resetAt + 2_000)).toBeCloseTo(600, 0)
  })

  it('resets connections at the configured chance, and never delivers a byte twice', async () => {
    const proxy = await through({ name: 'test', upBytesPerSecond: mbit(400), delayMs: 1, resetProbability: 1 })
    await expect(exchange(proxy.port, randomBytes(100_000))).rejects.toThrow(/ECONNRESET|socket hang up/)
  })
})
