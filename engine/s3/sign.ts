import type { ResolvedObject } from '../../protocol/endpoint-rules.ts'
import { type ObjectLocation, objectUrl } from '../../protocol/object-url.ts'
import type { S3Error } from '../core/errors.ts'
import { lazily } from '../core/lazy.ts'
import type { Sign } from '../core/signing.ts'
import { learnServerTime, serverNow } from './clock.ts'

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
 * no better place. Without a `ResolveEndpoint`, the engine's own rule (`objectUrl`); `awsEndpoints()`
 * (updraft-s3/aws-endpoints) applies S3's full endpoint rules and follows a bucket to its region.
 */
export type ResolveEndpoint = (location: ObjectLocation, refused?: S3Error) => Located | undefined

/** A {@link ResolveEndpoint} answer; `session` when requests are signed with other credentials than the caller's. */
export interface Located extends ResolvedObject {
  /**
   * Signs in the caller's credentials' stead: a directory bucket's CreateSession session, made
   * with the credentials of the target `resolveEndpoint` was given.
   */
  session?: SessionSource
}

/**
 * A {@link CredentialSource} that also adds the headers its keys need (the session token) to the
 * request's `headers`. `query` names the request (`?partNumber=2&uploadId=…`): with `refused`,
 * storage refused the keys that request was last signed with.
 */
export type SessionSource = (refused: boolean, headers?: Record<string, string>, query?: string) => Promise<Credentials>

/**
 * SigV4 header signing for requests on one object, through aws4fetch (aws4fetch-signer.ts). The body is never hashed (UNSIGNED-PAYLOAD),
 * so a part is signed without reading it. Signed with the servers' time (see clock.ts); a
 * `RequestTimeTooSkewed` refusal teaches it, and the request is signed again. With `resolveEndpoint`, a
 * refusal naming another region (301 PermanentRedirect, 400 AuthorizationHeaderMalformed) moves
 * every later request there, and the refused one is signed again; a `session` it answers (a
 * directory bucket's) signs instead of `credentials`.
 */
export function createSigner(
  credentials: Credentials | CredentialSource,
  location: ObjectLocation & { resolveEndpoint?: ResolveEndpoint },
): Sign {
  const { resolveEndpoint } = location
  let at: Located = resolveEndpoint?.(location) ?? {
    url: objectUrl(location),
    signingRegion: location.region,
    signingService: 's3',
  }
  // A directory bucket's session signs in the caller's credentials' stead (its bucket never moves).
  credentials = at.session ?? credentials
  // Derived signing keys, kept: four HMACs fewer per request.
  const cache = new Map<string, ArrayBuffer>()
  const sign = async (method: string, query = '', headers?: Record<string, string>, refused?: S3Error) => {
    const skewed = refused?.code === 'RequestTimeTooSkewed' && learnServerTime(refused.serverTime)
    const moved = refused && resolveEndpoint?.(location, refused)
    if (moved) at = moved
    const renewable = typeof credentials === 'function'
    if (refused && !skewed && !moved && !renewable) throw refused
    headers = { 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD', ...headers }
    const { signV4 } = await loadSigner()
    const signed = await signV4({
      ...(renewable
        ? await (credentials as SessionSource)(!!refused && !skewed && !moved, headers, query)
        : (credentials as Credentials)),
      method,
      url: at.url + query,
      headers,
      service: at.signingService,
      region: at.signingRegion,
      cache,
      datetime: new Date(serverNow()).toISOString().replace(/[:-]|\.\d{3}/g, ''),
    })
    return { method, ...signed }
  }
  return Object.assign(sign, { url: () => at.url })
}

/**
 * aws4fetch and its wrapper, a chunk of their own that presigned pages never load. Token mode
 * starts loading it beside its upload request (modes/token-mode.ts), so it costs no round trip.
 */
export const loadSigner = lazily(() => import('./aws4fetch-signer.ts'))
