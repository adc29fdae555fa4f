// The directory-bucket session cache (protocol/directory-session.ts), with a clock and timers the
// test controls: one CreateSession in flight per key, shared; renewed a minute before expiry (the
// AWS SDK's REFRESH_WINDOW_MS) or when the current session is refused; expired identities purged
// every 30 s by a timer that stops when the cache is empty and never holds a process open.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import {
  type DirectorySession,
  parseCreateSession,
  SESSION_PURGE_INTERVAL_MS,
  SESSION_REFRESH_BEFORE_MS,
  SessionCache,
} from '../../protocol/directory-session.ts'

let now = 1_000_000
const clock = () => now
const FIVE_MINUTES = 5 * 60_000

function creator() {
  let made = 0
  const create = vi.fn(async (): Promise<DirectorySession> => {
    made++
    return {
      accessKeyId: `AK${made}`,
      secretAccessKey: `S${made}`,
      sessionToken: `T${made}`,
      expires: now + FIVE_MINUTES,
    }
  })
  return create
}

beforeEach(() => {
  vi.useFakeTimers()
  now = 1_000_000
})
afterEach(() => vi.useRealTimers())

describe('SessionCache', () => {
  it('holds the seed constants: refresh 60 s before expiry, purge every 30 s', () => {
    expect(SESSION_REFRESH_BEFORE_MS).toBe(60_000)
    expect(SESSION_PURGE_INTERVAL_MS).toBe(30_000)
  })

  it('shares one CreateSession in flight between every request for the same key', async () => {
    const cache = new SessionCache(clock)
    let release!: (session: DirectorySession) => void
    const create = vi.fn(() => new Promise<DirectorySession>((resolve) => (release = resolve)))
    const asked = [1, 2, 3, 4].map(() => cache.get('b k', create))
    release({ accessKeyId: 'A', secretAccessKey: 'S', sessionToken: 'T', expires: now + FIVE_MINUTES })
    const sessions = await Promise.all(asked)
    expect(create).toHaveBeenCalledTimes(1)
    expect(new Set(sessions.map((s) => s.sessionToken))).toEqual(new Set(['T']))
  })

  it('keys by bucket and base credentials: another key makes its own session', async () => {
    const cache = new SessionCache(clock)
    const create = creator()
    await cache.get('bucket-a AK', create)
    await cache.get('bucket-b AK', create)
    await cache.get('bucket-a AK2', create)
    await cache.get('bucket-a AK', create)
    expect(create).toHaveBeenCalledTimes(3)
  })

  it('keeps a session until it has 60 s left, then renews it', async () => {
    const cache = new SessionCache(clock)
    const create = creator()
    expect((await cache.get('k', create)).sessionToken).toBe('T1')
    now += FIVE_MINUTES - SESSION_REFRESH_BEFORE_MS - 1
    expect((await cache.get('k', create)).sessionToken).toBe('T1')
    now += 1
    expect((await cache.get('k', create)).sessionToken).toBe('T2')
    expect(create).toHaveBeenCalledTimes(2)
  })

  it('renews a refused session once; a refusal of an older one takes the current', async () => {
    const cache = new SessionCache(clock)
    const create = creator()
    await cache.get('k', create)
    const refused = [cache.get('k', create, 'T1'), cache.get('k', create, 'T1')]
    expect((await Promise.all(refused)).map((s) => s.sessionToken)).toEqual(['T2', 'T2'])
    // A part signed with T1 whose refusal arrives after T2 was made: T2 is kept.
    expect((await cache.get('k', create, 'T1')).sessionToken).toBe('T2')
    expect(create).toHaveBeenCalledTimes(2)
  })

  it('forgets a failed CreateSession: the next request asks again', async () => {
    const cache = new SessionCache(clock)
    const create = vi.fn().mockRejectedValueOnce(new Error('AccessDenied')).mockImplementation(creator())
    await expect(cache.get('k', create)).rejects.toThrow('AccessDenied')
    expect((await cache.get('k', create)).sessionToken).toBe('T1')
    expect(create).toHaveBeenCalledTimes(2)
  })

  it('purges expired identities every 30 s and stops its timer when empty', async () => {
    const cache = new SessionCache(clock)
    await cache.get('k', creator())
    expect(vi.getTimerCount()).toBe(1)
    vi.advanceTimersByTime(SESSION_PURGE_INTERVAL_MS)
    expect(cache.size).toBe(1) // still good
    now += FIVE_MINUTES
    vi.advanceTimersByTime(SESSION_PURGE_INTERVAL_MS - 1)
    expect(cache.size).toBe(1) // not yet the 30 s tick
    vi.advanceTimersByTime(1)
    expect(cache.size).toBe(0)
    expect(vi.getTimerCount()).toBe(0)
    // A later session starts the timer again.
    await cache.get('k', creator())
    expect(vi.getTimerCount()).toBe(1)
  })

  it('keeps a session in flight through a purge', async () => {
    const cache = new SessionCache(clock)
    const pending = cache.get('k', () => new Promise<DirectorySession>(() => {}))
    void pending
    vi.advanceTimersByTime(SESSION_PURGE_INTERVAL_MS * 3)
    expect(cache.size).toBe(1)
  })
})

describe('the purge timer never keeps a process alive', () => {
  it('is unref-ed (real timers)', async () => {
    vi.useRealTimers()
    const spy = vi.spyOn(globalThis, 'setInterval')
    const cache = new SessionCache()
    await cache.get('k', async () => ({
      accessKeyId: 'A',
      secretAccessKey: 'S',
      sessionToken: 'T',
      expires: Date.now() + 1000,
    }))
    const timer = spy.mock.results[0]!.value as NodeJS.Timeout
    spy.mockRestore()
    expect(timer.hasRef()).toBe(false)
    cache.purge() // not expired yet: the timer stays
    expect(cache.size).toBe(1)
    clearInterval(timer)
  })
})

describe('parseCreateSession', () => {
  it('reads the CreateSessionResult credentials', () => {
    const xml = `<?xml version="1.0" encoding="UTF-8"?><CreateSessionResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Credentials><SessionToken>TOKEN</SessionToken><SecretAccessKey>SECRET</SecretAccessKey><AccessKeyId>AKID</AccessKeyId><Expiration>2026-11-24T12:05:00Z</Expiration></Credentials></CreateSessionResult>`
    expect(parseCreateSession(xml)).toEqual({
      accessKeyId: 'AKID',
      secretAccessKey: 'SECRET',
      sessionToken: 'TOKEN',
      expires: Date.parse('2026-11-24T12:05:00Z'),
    })
  })

  it('refuses a reply missing a field or with an unreadable expiry', () => {
    expect(
      parseCreateSession(
        '<CreateSessionResult><Credentials><AccessKeyId>A</AccessKeyId></Credentials></CreateSessionResult>',
      ),
    ).toBeUndefined()
    expect(
      parseCreateSession(
        '<Credentials><SessionToken>T</SessionToken><SecretAccessKey>S</SecretAccessKey><AccessKeyId>A</AccessKeyId><Expiration>soon</Expiration></Credentials>',
      ),
    ).toBeUndefined()
  })
})
