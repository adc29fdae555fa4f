import type { AddressInfo } from 'node:net'
import { connect, createServer, type Server, type Socket } from 'node:net'

/**
 * An access link emulated in user space (this kernel has no `netem`): TCP proxies on loopback
 * whose traffic crosses one shared link, shaped per direction.
 *
 * - **Bandwidth**: each direction is one serial line of `bytesPerSecond`, shared by every
 *   connection of every proxy on the link (one access link, as a home router has). Chunks are
 *   cut to at most `SEGMENT` bytes and take turns, so connections share it fairly.
 * - **Delay**: a chunk arrives `delayMs` (+ up to `jitterMs`) after its last byte left the line.
 *   Order within a connection is kept, as TCP keeps it.
 * - **Backpressure**: a connection stops being read once it has `queueBytes` waiting for the line,
 *   so a sender is paced by the link (through its socket buffers) instead of the proxy swallowing
 *   the whole file at loopback speed.
 * - **Loss**: TCP under the proxy never loses a byte, so a lost segment is rendered as what it
 *   costs TCP: that connection stalls for one round trip (a fast retransmit) before the segment
 *   and what follows it arrive. Congestion-window halving is not rendered.
 * - **Outages**: `outage` stops both directions for `durationMs` every `everyMs` (Wi-Fi that drops);
 *   connections stay open, bytes wait, as when a radio loses its link without the peer noticing.
 *   The schedule starts again at every `reset()`, so each measurement meets its drops at the same
 *   moments of its own run, whichever contender it is; `downtimeMs` says how long it was down.
 * - **Resets**: `resetProbability` per chunk destroys both sides of that connection.
 *
 * - **Handshakes**: a new connection's first bytes leave one round trip after it opened (SYN,
 *   SYN-ACK), so reusing connections pays off as on a real link. TLS is not rendered.
 *
 * TCP's own slow start is left to the real TCP underneath, which on loopback has none worth the
 * name.
 */
export interface LinkProfile {
  name: string
  /** Upstream (client → server) bytes per second. */
  upBytesPerSecond: number
  /** Downstream bytes per second. @default upBytesPerSecond */
  downBytesPerSecond?: number
  /** One-way delay; the round trip is twice this. */
  delayMs: number
  /** Extra delay, uniform in [0, jitterMs), per chunk (order kept). @default 0 */
  jitterMs?: number
  /** Probability that a segment of ~1460 bytes is lost. @default 0 */
  lossRate?: number
  /** Probability per chunk that the connection is reset. @default 0 */
  resetProbability?: number
  /** The first drop starts `firstAtMs` after the link is created or reset. @default everyMs - durationMs */
  outage?: { everyMs: number; durationMs: number; firstAtMs?: number }
}

/** The profiles of issue 16. Mbit/s are 10^6 bits. */
export const PROFILES: Record<string, LinkProfile> = {
  fibre: { name: 'fibre (1 Gbit/s, 5 ms RTT)', upBytesPerSecond: mbit(1000), delayMs: 2.5 },
  home: {
    name: 'home broadband (100 Mbit/s up, 30 ms RTT)',
    upBytesPerSecond: mbit(100),
    downBytesPerSecond: mbit(500),
    delayMs: 15,
  },
  transatlantic: { name: 'transatlantic (200 Mbit/s, 100 ms RTT)', upBytesPerSecond: mbit(200), delayMs: 50 },
  mobile: {
    name: 'mobile (20 Mbit/s, 150 ms RTT, 0.5% loss)',
    upBytesPerSecond: mbit(20),
    delayMs: 75,
    jitterMs: 10,
    lossRate: 0.005,
  },
  wifi: {
    name: 'stall-prone Wi-Fi (100 Mbit/s, 20 ms RTT, drops 3 s every 30 s)',
    upBytesPerSecond: mbit(100),
    delayMs: 10,
    jitterMs: 4,
    // The first drop 2 s into each run: every upload of 64 MiB and more meets one mid-transfer.
    outage: { everyMs: 30_000, durationMs: 3_000, firstAtMs: 2_000 },
  },
}

export function mbit(megabits: number): number {
  return (megabits * 1e6) / 8
}

/** Chunks cross the line in pieces this big at most, so connections interleave finely. */
const SEGMENT = 16 * 1024
const TCP_SEGMENT = 1460

export interface Link {
  profile: LinkProfile
  /** A proxy on 127.0.0.1 whose traffic to `target` (`http://host:port` or `host:port`) crosses this link. */
  proxy(target: string): Promise<LinkProxy>
  /** Bytes that crossed the line upstream, all proxies together, since the last reset. */
  readonly upBytes: number
  /** Zeroes the upstream tallies of the link and its proxies and restarts the outage schedule (between measurements). */
  reset(): void
  /** How long the link was down (its outages) between two wall-clock times, ms since the epoch. */
  downtimeMs(from: number, to: number): number
  close(): Promise<void>
}

export interface LinkProxy {
  /** `http://127.0.0.1:PORT`: use it where the target's URL would go. */
  url: string
  port: number
  /** Bytes this proxy's connections put on the upstream line since the last `link.reset()`. */
  readonly upBytes: number
  /** Wall-clock time (ms since the epoch) its first upstream byte left, since the last `link.reset()`. */
  readonly firstUpByteAt: number | undefined
  /** The first upstream byte of a connection opened at or after `since` (ms since the epoch). */
  firstUpByteAfter(since: number): number | undefined
  close(): Promise<void>
}

/** Upstream bytes and the first one's departure, for one proxy; and each connection's first. */
interface Tally {
  bytes: number
  firstAt: number | undefined
  connectionFirsts: number[]
}

interface Delivery {
  at: number
  write: () => void
}

/** One direction of the link: a serial line, then a delay. */
class Line {
  private freeAt = 0
  private readonly deliveries: Delivery[] = []
  private timer: NodeJS.Timeout | undefined
  bytes = 0

  constructor(
    private readonly bytesPerMs: number,
    private readonly profile: LinkProfile,
    private readonly outageUntil: (at: number) => number,
    private readonly onTick: () => void,
  ) {}

  /** Puts `chunk` on the line after what is already queued; returns when its last byte leaves. */
  send(
    chunk: Buffer,
    notBefore: number,
    lastDeliveryAt: number,
    tally: Tally,
    deliver: (chunk: Buffer) => void,
  ): { leavesAt: number; arrivesAt: number; departedAt: number } {
    const now = performance.now()
    const start = this.outageUntil(Math.max(now, notBefore, this.freeAt))
    const leavesAt = start + chunk.length / this.bytesPerMs
    this.freeAt = leavesAt
    this.bytes += chunk.length
    tally.bytes += chunk.length
    tally.firstAt ??= performance.timeOrigin + start
    return {
      leavesAt,
      arrivesAt: this.arrival(leavesAt, chunk, lastDeliveryAt, deliver),
      departedAt: performance.timeOrigin + start,
    }
  }

  private arrival(leavesAt: number, chunk: Buffer, lastDeliveryAt: number, deliver: (chunk: Buffer) => void): number {
    let arrivesAt = leavesAt + this.profile.delayMs + Math.random() * (this.profile.jitterMs ?? 0)
    const loss = this.profile.lossRate ?? 0
    if (loss > 0 && Math.random() < 1 - (1 - loss) ** Math.ceil(chunk.length / TCP_SEGMENT)) {
      // A lost segment costs its connection one more round trip before it and what follows arrive.
      arrivesAt += 2 * this.profile.delayMs
    }
    arrivesAt = this.outageUntil(Math.max(arrivesAt, lastDeliveryAt))
    this.deliverAt(arrivesAt, () => deliver(chunk))
    return arrivesAt
  }

  /** Runs `write` at `at`, after every delivery queued before it that is due by then. */
  deliverAt(at: number, write: () => void) {
    this.deliveries.push({ at, write })
    this.schedule()
  }

  private schedule() {
    if (this.timer || this.deliveries.length === 0) return
    const next = Math.min(...this.deliveries.slice(0, 64).map((delivery) => delivery.at))
    this.timer = setTimeout(() => this.pump(), Math.max(0, next - performance.now()))
  }

  private pump() {
    this.timer = undefined
    const now = performance.now()
    // Deliveries are nearly in time order (jitter aside): take every one that is due, in order.
    const due = this.deliveries.filter((delivery) => delivery.at <= now)
    if (due.length > 0) {
      const waiting = this.deliveries.filter((delivery) => delivery.at > now)
      this.deliveries.length = 0
      this.deliveries.push(...waiting)
      for (const delivery of due) delivery.write()
    }
    this.onTick()
    this.schedule()
  }

  /** Milliseconds of line time already queued ahead of a new chunk. */
  backlogMs(): number {
    return Math.max(0, this.freeAt - performance.now())
  }

  reset() {
    this.bytes = 0
  }

  stop() {
    clearTimeout(this.timer)
    this.deliveries.length = 0
  }
}

export function createLink(profile: LinkProfile): Link {
  const { outage } = profile
  const firstOutageAt = outage ? (outage.firstAtMs ?? outage.everyMs - outage.durationMs) : 0
  let started = performance.now()
  /** `at` (performance.now() time), or the end of the outage it falls in. */
  const outageUntil = (at: number) => {
    if (!outage || at < started + firstOutageAt) return at
    const phase = (at - started - firstOutageAt) % outage.everyMs
    return phase < outage.durationMs ? at + (outage.durationMs - phase) : at
  }
  /** Outage time within [from, to] (performance.now() times). */
  const downWithin = (from: number, to: number) => {
    if (!outage) return 0
    let down = 0
    for (let start = started + firstOutageAt; start < to; start += outage.everyMs) {
      down += Math.max(0, Math.min(to, start + outage.durationMs) - Math.max(from, start))
    }
    return down
  }
  const paused = new Set<{ resumeIfDrained(): void }>()
  const tick = () => {
    for (const connection of paused) connection.resumeIfDrained()
  }
  const up = new Line(profile.upBytesPerSecond / 1000, profile, outageUntil, tick)
  const down = new Line((profile.downBytesPerSecond ?? profile.upBytesPerSecond) / 1000, profile, outageUntil, tick)
  // Enough to keep the line busy through one round trip of scheduling, as a router's queue does.
  const queueMs = Math.max(5, 2 * profile.delayMs)
  const servers: Server[] = []
  const sockets = new Set<Socket>()
  const tallies: Tally[] = []
  const ignored: Tally = { bytes: 0, firstAt: undefined, connectionFirsts: [] }

  /**
   * Copies `from` → `to` across `line`, pausing `from` while its backlog is over queueMs; none
   * of it leaves before `notBefore`.
   */
  const pipe = (from: Socket, to: Socket, line: Line, tally: Tally, resetBoth: () => void, notBefore = 0) => {
    let lastDeliveryAt = 0
    let first = true
    const flow = {
      resumeIfDrained() {
        if (line.backlogMs() <= queueMs) {
          paused.delete(flow)
          from.resume()
        }
      },
    }
    from.on('data', (data: Buffer) => {
      for (let offset = 0; offset < data.length; offset += SEGMENT) {
        if ((profile.resetProbability ?? 0) > 0 && Math.random() < profile.resetProbability!) return resetBoth()
        const chunk = data.subarray(offset, offset + SEGMENT)
        const sent = line.send(chunk, notBefore, lastDeliveryAt, tally, (bytes) => to.destroyed || to.write(bytes))
        lastDeliveryAt = sent.arrivesAt
        if (first) tally.connectionFirsts.push(sent.departedAt)
        first = false
      }
      if (line.backlogMs() > queueMs) {
        from.pause()
        paused.add(flow)
      }
    })
    // A half-close travels the link too, behind the last byte.
    from.on('end', () => {
      lastDeliveryAt = Math.max(lastDeliveryAt, performance.now() + profile.delayMs)
      line.deliverAt(lastDeliveryAt, () => to.end())
    })
  }

  return {
    profile,
    get upBytes() {
      return up.bytes
    },
    reset() {
      up.reset()
      down.reset()
      for (const tally of tallies) Object.assign(tally, { bytes: 0, firstAt: undefined, connectionFirsts: [] })
      started = performance.now()
    },
    downtimeMs: (from, to) => downWithin(from - performance.timeOrigin, to - performance.timeOrigin),
    async proxy(target) {
      const { hostname, port } = new URL(target.includes('://') ? target : `tcp://${target}`)
      const mine = new Set<Socket>()
      const tally: Tally = { bytes: 0, firstAt: undefined, connectionFirsts: [] }
      tallies.push(tally)
      // Half-open allowed: an `end` crosses the link like data, and each side closes when both have.
      const server = createServer({ allowHalfOpen: true }, (client) => {
        const upstream = connect({
          port: Number(port),
          host: hostname === 'localhost' ? '127.0.0.1' : hostname,
          allowHalfOpen: true,
        })
        for (const socket of [client, upstream]) sockets.add(socket) && mine.add(socket)
        const resetBoth = () => {
          client.resetAndDestroy()
          upstream.resetAndDestroy()
        }
        // A new connection's first bytes wait for its handshake: SYN, SYN-ACK, one round trip.
        const handshakeDone = performance.now() + 2 * profile.delayMs
        pipe(client, upstream, up, tally, resetBoth, handshakeDone)
        pipe(upstream, client, down, ignored, resetBoth)
        for (const socket of [client, upstream]) {
          socket.setNoDelay(true)
          // A reset on one side resets the other; an orderly end crosses the link as data does
          // (pipe), and each socket closes by itself once both its directions have ended.
          socket.on('error', () => resetBoth())
          socket.on('close', () => {
            sockets.delete(socket)
            mine.delete(socket)
          })
        }
      })
      servers.push(server)
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
      const { port: proxyPort } = server.address() as AddressInfo
      return {
        url: `http://127.0.0.1:${proxyPort}`,
        port: proxyPort,
        get upBytes() {
          return tally.bytes
        },
        get firstUpByteAt() {
          return tally.firstAt
        },
        firstUpByteAfter(since) {
          const after = tally.connectionFirsts.filter((at) => at >= since)
          return after.length > 0 ? Math.min(...after) : undefined
        },
        close: () =>
          new Promise<void>((resolve) => {
            for (const socket of mine) socket.destroy()
            server.close(() => resolve())
          }),
      }
    },
    async close() {
      up.stop()
      down.stop()
      for (const socket of sockets) socket.destroy()
      await Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))))
    },
  }
}
