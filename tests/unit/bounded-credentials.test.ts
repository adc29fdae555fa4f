// The server's credentials within `timeouts.credentials` (server/bounded-credentials.ts), with a
// provider standing in for a source: one that never settles is dropped at the bound and the next
// call asks afresh; a valid credential answers at once in its renewal window, even while the
// renewal hangs. Fake timers: no wall-clock bound. The real sources are in tests/server-timeouts.test.ts.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { boundedServerCredentials } from '../../server/bounded-credentials.ts'
import { NotAnsweredError } from '../../server/bounds.ts'
import type { ResolvedCredentials } from '../../server/credentials.ts'

const timeouts = { credentials: 1000, sts: 1000, storage: 1000 }
const never = () => new Promise<ResolvedCredentials>(() => {})
const issued = (id: string, msLeft: number): ResolvedCredentials => ({
  accessKeyId: id,
  secretAccessKey: 's',
  sessionToken: 't',
  expiration: new Date(Date.now() + msLeft),
})

beforeEach(() => void vi.useFakeTimers())
afterEach(() => void vi.useRealTimers())

const boundedOf = (provider: () => Promise<ResolvedCredentials>) =>
  boundedServerCredentials({
    credentials: provider,
    region: 'us-east-1',
    timeouts,
  }) as () => Promise<ResolvedCredentials>

describe('boundedServerCredentials', () => {
  it('a static key is handed over as it is', () => {
    const key = { accessKeyId: 'a', secretAccessKey: 'b' }
    expect(boundedServerCredentials({ credentials: key, region: 'us-east-1', timeouts })).toBe(key)
  })

  it('a source that never answers: NotAnsweredError (503) at the bound, every time; the next call asks afresh and succeeds once it answers', async () => {
    let answering = false
    const provider = vi.fn(() => (answering ? Promise.resolve(issued('fresh', 3_600_000)) : never()))
    const credentials = boundedOf(provider)
    for (let i = 0; i < 2; i++) {
      const late = credentials()
      const caught = late.catch((error: unknown) => error)
      await vi.advanceTimersByTimeAsync(1000)
      expect(await caught).toBeInstanceOf(NotAnsweredError)
      expect(await caught).toMatchObject({
        status: 503,
        message: expect.stringMatching(
          /^The credentials provider given in the server config did not answer within 1000 ms/,
        ),
      })
    }
    answering = true
    expect(await credentials()).toMatchObject({ accessKeyId: 'fresh' })
    expect(provider).toHaveBeenCalledTimes(3)
    // Kept until its renewal window: no more calls.
    expect(await credentials()).toMatchObject({ accessKeyId: 'fresh' })
    expect(provider).toHaveBeenCalledTimes(3)
  })

  it('in the renewal window a valid credential answers at once while the renewal hangs; once renewed, the new one', async () => {
    const answers: Array<() => Promise<ResolvedCredentials>> = [
      () => Promise.resolve(issued('old', 4 * 60_000)),
      never,
      () => Promise.resolve(issued('new', 3_600_000)),
    ]
    const credentials = boundedOf(() => answers.shift()!())
    expect(await credentials()).toMatchObject({ accessKeyId: 'old' })
    // In the window (under 5 minutes left): the old one, the renewal hanging behind it.
    expect(await credentials()).toMatchObject({ accessKeyId: 'old' })
    await vi.advanceTimersByTimeAsync(1000)
    // That renewal was dropped at the bound; this call starts another, which answers.
    expect(await credentials()).toMatchObject({ accessKeyId: 'old' })
    await vi.advanceTimersByTimeAsync(0)
    expect(await credentials()).toMatchObject({ accessKeyId: 'new' })
  })
})
