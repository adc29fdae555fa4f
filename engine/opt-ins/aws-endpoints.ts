import {
  type DirectorySession,
  parseCreateSession,
  SESSION_TOKEN_HEADER,
  SessionCache,
} from '../../protocol/directory-session.ts'
import { type EndpointRules, type ResolvedObject, resolveObjectUrl } from '../../protocol/endpoint-rules.ts'
import { encodeKey, type ObjectLocation } from '../../protocol/object-url.ts'
import { type S3Error, UploadError } from '../core/errors.ts'
import { createRun } from '../core/run.ts'
import { serverNow } from '../s3/clock.ts'
import { send } from '../s3/send.ts'
import { type CredentialSource, type Credentials, createSigner, type Located } from '../s3/sign.ts'
import type { ObjectExtras, ObjectTarget } from '../s3/target.ts'

export { EndpointRuleError, type EndpointRules, type ResolvedObject } from '../../protocol/endpoint-rules.ts'
// The contract between the engine and an endpoint resolver (the `resolveEndpoint` field of an upload's options).
export type { Located, ResolveEndpoint, SessionSource } from '../s3/sign.ts'

/**
 * S3's endpoint rules, an opt-in of `uploadObject` and of token-mode `upload`: FIPS, dual-stack
 * and Transfer Acceleration hosts, access-point and Outposts ARNs as the bucket, and a bucket
 * followed to its region — on a 301 PermanentRedirect or a 400 naming the region, the request is
 * signed again for that region, and the rest of the upload goes there too. Off the base bundle:
 * pages that upload to one known store never need it.
 *
 * @example
 * ```ts
 * import { upload, uploadObject } from 'updraft-s3'
 * import { awsEndpoints } from 'updraft-s3/aws-endpoints'
 *
 * await uploadObject(file, { ...target, ...awsEndpoints({ useDualstackEndpoint: true }) })
 * await upload(file, { ...awsEndpoints() }) // token mode: follow the bucket to its region
 * await uploadObject(file, { ...target, bucket: 'uploads--use1-az4--x-s3', ...awsEndpoints() }) // S3 Express One Zone
 * ```
 *
 * A directory bucket (S3 Express One Zone, `name--zoneid--x-s3`) is written with session
 * credentials: before its first request, CreateSession on the bucket's zonal endpoint, signed
 * with the caller's credentials; then every request signed with the session's (service
 * `s3express`, the token in `x-amz-s3session-token`). Sessions are shared by every upload on the
 * page to the same bucket with the same credentials, renewed a minute before they expire or when
 * storage refuses one as expired.
 * @throws EndpointRuleError (when the upload starts) for combinations S3 refuses, naming the
 *   setting to change.
 */
export function awsEndpoints(rules: EndpointRules = {}): ObjectExtras {
  return {
    resolveEndpoint(location, refused) {
      // Parts in flight together are all refused: each moves to the region named, the first included.
      const region = refused ? bucketRegion(refused) : location.region
      if (!region || (refused && region === location.region)) return undefined
      const resolved: Located = resolveObjectUrl({ ...location, region, ...rules })
      if (resolved.signingService === 's3express') resolved.session = directorySession(location, resolved)
      return resolved
    },
  }
}

/**
 * The region a refusal names: `x-amz-bucket-region` (301 PermanentRedirect, 400), else the 400
 * AuthorizationHeaderMalformed body's `<Region>` — what a page sees when the bucket's CORS rules
 * do not expose that header.
 */
function bucketRegion({ status, response }: S3Error): string | undefined {
  if (status !== 301 && status !== 400) return undefined
  return response?.header('x-amz-bucket-region') ?? /<Region>([a-z0-9-]+)<\/Region>/.exec(response?.body ?? '')?.[1]
}

/** Directory buckets' sessions, for every upload on the page (the server keeps its own). */
const sessions = new SessionCache(serverNow)

/**
 * Signs a directory bucket's requests with a CreateSession session: the cached one for this
 * bucket and base credentials, else a new one. A request refused as signed re-creates the
 * session it was signed with, once; one signed with an older session takes the current one.
 */
function directorySession(location: ObjectLocation, resolved: ResolvedObject): Located['session'] {
  // `resolveEndpoint` is given the whole target: its credentials, and the transfer options CreateSession is sent with.
  const { credentials } = location as ObjectTarget
  // The bucket's own URL: `https://bucket.s3express-zone.region.amazonaws.com/` (or path-style), the object's without its key.
  const bucket = {
    url: resolved.url.slice(0, resolved.url.length - encodeKey(location.key).length),
    signingRegion: resolved.signingRegion,
    signingService: 's3express' as const,
  }
  const signedWith = new Map<string, string>()
  const key = `${bucket.url} ${whose(credentials)}`
  return async (refused, headers, query) => {
    const { accessKeyId, secretAccessKey, sessionToken } = await sessions.get(
      key,
      () => createSession(credentials, location, bucket),
      refused ? signedWith.get(query!) : undefined,
    )
    signedWith.set(query!, (headers![SESSION_TOKEN_HEADER] = sessionToken))
    return { accessKeyId, secretAccessKey }
  }
}

/**
 * Whose session it is: fixed credentials by their key id (uploads with the same keys share
 * sessions); a `CredentialSource` (token mode's, one per upload) by itself, so the credentials it
 * renews keep the session made with the first ones.
 */
function whose(credentials: Credentials | CredentialSource): string {
  if (typeof credentials !== 'function') return credentials.accessKeyId
  if (!sources.has(credentials)) sources.set(credentials, `source ${++sourceCount}`)
  return sources.get(credentials)!
}
/** Weak: a finished upload's source is not kept for the key it was given. */
const sources = new WeakMap<CredentialSource, string>()
let sourceCount = 0

/**
 * `GET /?session` on the bucket, signed as `s3express` with the caller's credentials (their STS
 * token as `x-amz-security-token`), through the engine's transport and retries. Not cancelled by
 * one upload's abort: other uploads may share it, and cleanup needs it too.
 * https://docs.aws.amazon.com/AmazonS3/latest/API/API_CreateSession.html
 */
async function createSession(
  credentials: Credentials | CredentialSource,
  location: ObjectLocation,
  bucket: ResolvedObject,
): Promise<DirectorySession> {
  // Never moved by a refusal: a refused CreateSession is signed again with renewed credentials.
  const sign = createSigner(credentials, {
    ...location,
    resolveEndpoint: (_, refused) => (refused ? undefined : bucket),
  })
  const reply = await send(
    createRun(location as ObjectTarget),
    (refused) => sign('GET', '?session', undefined, refused),
    { signal: undefined },
  )
  const session = parseCreateSession(reply.body)
  if (!session) throw new UploadError(`CreateSession on ${location.bucket} answered without complete Credentials`)
  return session
}
