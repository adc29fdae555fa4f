import { AwsV4Signer } from 'aws4fetch'
import type { ResolvedObject } from '../protocol/endpoint-rules.ts'
import { objectUrl, type ObjectLocation } from '../protocol/object-url.ts'
import { learnServerTime, serverNow } from './clock.ts'
import type { S3Error } from './errors.ts'
import type { ResolvedOptions } from './options.ts'
import type { SignedRequest } from './send.ts'

/** AWS-style credentials that sign requests to storage (SigV4). */
export interface Credentials {
  accessKeyId: string
  secretAccessKey: string
  /** Present for temporary (STS) credentials: sent as `x-amz-security-token`. */
  sessionToken?: string
}

/**
 * Credentials that can be renewed: asked before every request, with `refused` true after storage
 * refused the last ones (ExpiredToken, 403). Return fresh ones, or throw to give up.
 */
export type CredentialSource = (refused: boolean) => Credentials | Promise<Credentials>

/**
 * Where an object's requests go and how they are signed. Without `refused`: from its location.
 * With it (storage refused a request): where to sign again, or undefined when the refusal names
 * no better place. Without a `Locate`, the engine's own rule (`objectUrl`); `awsEndpoints()`
 * (updraft/aws-endpoints) applies S3's full endpoint rules and follows a bucket to its region.
 */
export type Locate = (location: ObjectLocation, refused?: S3Error) => Located | undefined

/** A {@link Locate} answer; `session` when requests are signed with other credentials than the caller's. */
export interface Located extends ResolvedObject {
  /**
   * The credentials to sign with instead (a directory bucket's CreateSession session), and the
   * headers that carry their token. `stale`: storage refused the last request (signed for
   * `request`, its method and URL) as signed.
   */
  session?: (credentials: Credentials | CredentialSource, stale: boolean, options: ResolvedOptions, request: string) => Promise<SessionKeys>
}

/** Credentials a {@link Located} `session` signs with, and the headers carrying their token. */
export interface SessionKeys extends Credentials {
  headers: Record<string, string>
}

export type Sign = ((method: string, query?: string, headers?: Record<string, string>, refused?: S3Error) => Promise<SignedRequest>) & {
  /** The object's URL as now signed for: it moves when storage names the bucket's region. */
  url(): string
}

/**
 * SigV4 header signing for requests on one object. The body is never hashed (UNSIGNED-PAYLOAD),
 * so a part is signed without reading it. Signed with the servers' time (see clock.ts); a
 * `RequestTimeTooSkewed` refusal teaches it, and the request is signed again. With `locate`, a
 * refusal naming another region (301 PermanentRedirect, 400 AuthorizationHeaderMalformed) moves
 * every later request there, and the refused one is signed again.
 */
export function createSigner(credentials: Credentials | CredentialSource, location: ObjectLocation & { locate?: Locate }, options?: ResolvedOptions): Sign {
  // `options` carry the transport a `session` sends CreateSession through (resume's listing has none: no locate).
  const { locate } = location
  let at: Located = locate?.(location) ?? { url: objectUrl(location), signingRegion: location.region, signingService: 's3' }
  // aws4fetch caches the derived signing key here, saving four HMACs per request.
  const cache = new Map<string, ArrayBuffer>()
  const sign = async (method: string, query = '', headers?: Record<string, string>, refused?: S3Error) => {
    const skewed = refused?.code === 'RequestTimeTooSkewed' && learnServerTime(refused.serverTime)
    const moved = refused && locate?.(location, refused)
    if (moved) at = moved
    const renewable = typeof credentials === 'function'
    const stale = !!refused && !skewed && !moved
    if (stale && !renewable && !at.session) throw refused
    const keys = at.session ? await at.session(credentials, stale, options!, method + at.url + query) : renewable ? await credentials(stale) : credentials
    const signed = await new AwsV4Signer({
      ...keys,
      method,
      url: at.url + query,
      headers: { 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD', ...headers, ...(keys as SessionKeys).headers },
      service: at.signingService,
      region: at.signingRegion,
      cache,
      datetime: new Date(serverNow()).toISOString().replace(/[:-]|\.\d{3}/g, ''),
    }).sign()
    return { method, url: signed.url.toString(), headers: Object.fromEntries(signed.headers) }
  }
  return Object.assign(sign, { url: () => at.url })
}
