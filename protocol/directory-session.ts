/**
 * S3 Express One Zone (directory buckets, `name--zoneid--x-s3`): object requests are not signed
 * with the caller's credentials but with a session's, which `CreateSession` (`GET /?session` on the
 * bucket's zonal endpoint, signed as service `s3express`) hands out for about five minutes.
 * https://docs.aws.amazon.com/AmazonS3/latest/API/API_CreateSession.html
 * Both sides use it: the engine's `awsEndpoints()` (token mode, `uploadObject`) and the server's
 * presigner. The cache follows the AWS SDK's (S3ExpressIdentityProviderImpl, S3ExpressIdentityCache).
 */
import { xmlText } from './xml.ts'

/** An identity is renewed once it has less than this left: the SDK's REFRESH_WINDOW_MS. */
export const SESSION_REFRESH_BEFORE_MS = 60_000
/** Expired identities are dropped this often: the SDK's EXPIRED_CREDENTIAL_PURGE_INTERVAL_MS. */
export const SESSION_PURGE_INTERVAL_MS = 30_000
/** Carries the session token on a signed request, instead of `x-amz-security-token`. */
export const SESSION_TOKEN_HEADER = 'x-amz-s3session-token'
/** …and in a presigned URL's query, instead of `X-Amz-Security-Token` (the SDK's SESSION_TOKEN_QUERY_PARAM). */
export const SESSION_TOKEN_QUERY = 'X-Amz-S3session-Token'
/** The service directory-bucket requests (CreateSession included) are signed for. */
export const SESSION_SIGNING_SERVICE = 's3express'

/** Session credentials from CreateSession; `expires` in ms since the epoch. */
export interface DirectorySession {
  accessKeyId: string
  secretAccessKey: string
  sessionToken: string
  expires: number
}

/** `bucket--zoneid--x-s3`: a directory bucket's name. */
export const isDirectoryBucket = (bucket: string) => bucket.endsWith('--x-s3')

/**
 * The credentials of a CreateSession reply (`<CreateSessionResult><Credentials>`), or undefined
 * when one is missing or the expiry is not a time.
 */
export function parseCreateSession(xml: string): DirectorySession | undefined {
  const accessKeyId = xmlText(xml, 'AccessKeyId')
  const secretAccessKey = xmlText(xml, 'SecretAccessKey')
  const sessionToken = xmlText(xml, 'SessionToken')
  const expires = Date.parse(xmlText(xml, 'Expiration') ?? '')
  return accessKeyId && secretAccessKey && sessionToken && expires
    ? { accessKeyId, secretAccessKey, sessionToken, expires }
    : undefined
}

interface Entry {
  /** Settles with the session; shared by every request that asks while it is in flight. */
  session: Promise<DirectorySession>
  /** Once it has settled. */
  value?: DirectorySession
}

/**
 * Sessions by key (bucket and base credentials): one CreateSession in flight per key, shared by
 * every part that asks; an identity renewed when it has less than a minute left, or when storage
 * refused it (`refused`: the token storage refused; a newer one already cached is kept). Expired
 * identities are dropped every 30 s by a timer that never keeps a process alive and stops when
 * the cache is empty.
 */
export class SessionCache {
  readonly #entries = new Map<string, Entry>()
  readonly #now: () => number
  #timer: ReturnType<typeof setInterval> | undefined

  /** `now`: the clock session expiry times are read in (the engine's serverNow). */
  constructor(now: () => number = Date.now) {
    this.#now = now
  }

  /** How many sessions are held (in flight included). */
  get size(): number {
    return this.#entries.size
  }

  /** The session for `key`: cached while good for a minute more, else `create`'s. */
  get(key: string, create: () => Promise<DirectorySession>, refused?: string): Promise<DirectorySession> {
    const entry = this.#entries.get(key)
    if (
      entry &&
      (!entry.value ||
        (entry.value.expires - this.#now() > SESSION_REFRESH_BEFORE_MS && entry.value.sessionToken !== refused))
    ) {
      return entry.session
    }
    const fresh: Entry = { session: create() }
    fresh.session.then(
      (value) => (fresh.value = value),
      // A failed CreateSession is not remembered: the next request asks again.
      () => this.#entries.get(key) === fresh && this.#entries.delete(key),
    )
    this.#entries.set(key, fresh)
    this.#timer ??= unrefed(setInterval(() => this.purge(), SESSION_PURGE_INTERVAL_MS))
    return fresh.session
  }

  /** Drops expired identities; the timer stops when none is left. */
  purge(): void {
    for (const [key, { value }] of this.#entries) if (value && value.expires <= this.#now()) this.#entries.delete(key)
    if (this.#entries.size === 0) {
      clearInterval(this.#timer)
      this.#timer = undefined
    }
  }
}

/** Node's timers would keep the process alive for the cache's sake; browsers' have no unref. */
function unrefed<T>(timer: T): T {
  ;(timer as { unref?: () => void }).unref?.()
  return timer
}
