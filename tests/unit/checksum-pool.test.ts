// The hashing pool (engine/opt-ins/checksums/off-thread.ts) against a step-through stand-in for its
// workers: what it does when a worker is refused, fails, never starts, cannot read a body, or
// sits idle. Every outcome is the body's right digest, or the body's own read error; never a hang.
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { digest } from '../../engine/opt-ins/checksums/digest.ts'
import type { HashReply, HashRequest } from '../../engine/opt-ins/checksums/hash-worker.ts'
import type { HashWorker } from '../../engine/opt-ins/checksums/start-worker.ts'

interface StandIn {
  posted: HashRequest[]
  reply(reply: HashReply): void
  failed(): void
  stopped: boolean
}

/** What the stand-in `startWorker` does: `'start'` a worker the test drives, `'refuse'` none. */
let behaviour: 'start' | 'refuse' = 'start'
let started: StandIn[] = []

vi.mock('#hash-worker', () => ({
  startWorker(reply: (reply: HashReply) => void, failed: () => void): HashWorker | undefined {
    if (behaviour === 'refuse') return undefined
    const standIn: StandIn = { posted: [], reply, failed, stopped: false }
    started.push(standIn)
    return {
      post: (request) => void standIn.posted.push(request),
      busy() {},
      stop: () => void (standIn.stopped = true),
    }
  },
}))

const bytes = Uint8Array.from({ length: 100_000 }, (_, i) => (i * 7) % 256)
let pool: typeof import('../../engine/opt-ins/checksums/off-thread.ts')

beforeEach(async () => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
  vi.resetModules()
  behaviour = 'start'
  started = []
  pool = await import('../../engine/opt-ins/checksums/off-thread.ts')
})
afterEach(() => void vi.useRealTimers())
// The unit lane keeps modules from file to file (vitest.config.ts): the next file gets the real
// workers and a pool module evaluated without this stand-in.
afterAll(() => {
  vi.doUnmock('#hash-worker')
  vi.resetModules()
})

/** Lets posted promises and the stand-in's bookkeeping run. */
const settle = () => vi.advanceTimersByTimeAsync(0)

describe('the hashing pool', () => {
  it('hands a body to a worker and resolves with the digest it answers', async () => {
    const hashed = pool.hashBody('md5', new Blob([bytes]))
    await settle()
    const [worker] = started
    worker!.reply({ ready: true })
    const { id } = worker!.posted[0]!
    worker!.reply({ id, digest: Uint8Array.of(1, 2, 3) })
    expect(await hashed).toEqual(Uint8Array.of(1, 2, 3))
  })

  it("posts a copy of a Uint8Array body, only its own bytes, never the caller's", async () => {
    const view = bytes.subarray(10, 90_010)
    void pool.hashBody('crc32', view)
    await settle()
    const sent = started[0]!.posted[0]!.body as Uint8Array
    expect(sent).toEqual(view)
    expect(sent.buffer).not.toBe(view.buffer)
    expect(sent.buffer.byteLength).toBe(view.byteLength)
  })

  it('hashes here when no worker can start, and does not ask again', async () => {
    behaviour = 'refuse'
    expect(await pool.hashBody('md5', new Blob([bytes]))).toEqual(await digest('md5', bytes))
    behaviour = 'start'
    expect(await pool.hashBody('sha256', bytes)).toEqual(await digest('sha256', bytes))
    expect(started).toHaveLength(0)
  })

  it('a worker that fails (a CSP refusal arriving late, a crash): its bodies are hashed here, and every later one', async () => {
    const first = pool.hashBody('crc32c', new Blob([bytes]))
    const second = pool.hashBody('md5', bytes)
    await settle()
    for (const worker of started) worker.failed()
    expect(await first).toEqual(await digest('crc32c', bytes))
    expect(await second).toEqual(await digest('md5', bytes))
    expect(started.every((worker) => worker.stopped)).toBe(true)
    const count = started.length
    expect(await pool.hashBody('crc32', bytes)).toEqual(await digest('crc32', bytes))
    expect(started).toHaveLength(count)
  })

  it(`a worker that neither starts nor fails is given up after START_MS: the body is hashed here, no hang`, async () => {
    const hashed = pool.hashBody('md5', new Blob([bytes]))
    await vi.advanceTimersByTimeAsync(pool.START_MS)
    expect(await hashed).toEqual(await digest('md5', bytes))
    expect(started[0]!.stopped).toBe(true)
  })

  it('a body the worker cannot read is read here again: its own error, if it fails again, is what the upload gets', async () => {
    const unreadable = Object.assign(new Blob([bytes]), {
      arrayBuffer: () => Promise.reject(new DOMException('the file changed', 'NotReadableError')),
    })
    const hashed = pool.hashBody('md5', unreadable)
    await settle()
    const [worker] = started
    worker!.reply({ ready: true })
    worker!.reply({ id: worker!.posted[0]!.id, error: 'NotReadableError: the file changed' })
    await expect(hashed).rejects.toMatchObject({ name: 'NotReadableError' })
    // The worker itself is fine: the next body goes to it.
    void pool.hashBody('md5', bytes)
    await settle()
    expect(worker!.posted).toHaveLength(2)
  })

  it(`starts at most MAX_WORKERS for many bodies at once, and stops each after IDLE_MS without work`, async () => {
    const hashes = Array.from({ length: 6 }, () => pool.hashBody('crc32', bytes))
    await settle()
    expect(started).toHaveLength(pool.MAX_WORKERS)
    expect(started.map((worker) => worker.posted.length)).toEqual([3, 3])
    for (const worker of started) {
      worker.reply({ ready: true })
      for (const { id } of worker.posted) worker.reply({ id, digest: new Uint8Array(4) })
    }
    await Promise.all(hashes)
    await vi.advanceTimersByTimeAsync(pool.IDLE_MS - 1)
    expect(started.map((worker) => worker.stopped)).toEqual([false, false])
    await vi.advanceTimersByTimeAsync(1)
    expect(started.map((worker) => worker.stopped)).toEqual([true, true])
    void pool.hashBody('crc32', bytes)
    await settle()
    expect(started).toHaveLength(pool.MAX_WORKERS + 1)
  })

  it(`hashes bodies under IN_PLACE_BELOW here, without a worker`, async () => {
    const small = bytes.subarray(0, pool.IN_PLACE_BELOW - 1)
    expect(await pool.hashBody('md5', new Blob([small]))).toEqual(await digest('md5', small))
    expect(started).toHaveLength(0)
  })
})
