import { S3RequestPresigner } from '@aws-sdk/s3-request-presigner'
// The SDK's own SHA-256 (S3Client's default): node:crypto under Node, Web Crypto under the
// `browser` condition that workerd bundles take.
import { Sha256 } from '@smithy/core/checksum'
import { buildQueryString, HttpRequest } from '@smithy/core/protocols'
import { SESSION_SIGNING_SERVICE } from '../protocol/directory-session.ts'

export interface SigningCredentials {
  accessKeyId: string
  secretAccessKey: string
  sessionToken?: string
}

/** SigV4's limit on X-Amz-Expires: a presigned URL lives at most 7 days. */
export const MAX_EXPIRES_IN = 604_800

export interface PresignRequest {
  method: string
  /** The object URL as `objectUrl` builds it: path already RFC 3986-encoded, no query string. */
  url: string
  /** Operation parameters, e.g. `{ partNumber: '3', uploadId }`; raw values, encoded here. */
  query?: Record<string, string>
  /** Headers the request must carry, signed into the URL as headers (host is added). */
  headers?: Record<string, string>
  /** Seconds, 1..604800 (SigV4's limit). */
  expiresIn: number
  /** @default now */
  date?: Date
}

/**
 * Presigns with the credentials current when it was handed out (a session's, a directory bucket
 * session's, or the server's own key); `expiresIn` is cut to what those credentials have left.
 */
export interface Presign {
  (request: PresignRequest): Promise<string>
  /**
   * What it signs with, for what else those credentials sign (a POST policy: server/presigned-form.ts).
   * Absent for a directory bucket's sessions: S3 Express has no POST Object.
   */
  readonly signing?: Signing
}

/** The credentials a {@link Presign} signs with, its region, and when they expire (epoch ms; none: never). */
export interface Signing {
  credentials: SigningCredentials
  region: string
  expires?: number
}

/**
 * A {@link Presign} whose URLs never outlive the credentials that sign them (`expires`, epoch ms;
 * none: never): storage would refuse a URL as expired after them, so `expiresIn` is cut to what
 * they have left at the signing date, and once they are spent it throws `expired`. It says what it
 * signs with (`signing`), but for a directory bucket's session: S3 Express has no POST Object.
 */
export function expiringPresigner(
  credentials: SigningCredentials,
  region: string,
  expires: number | undefined,
  expired: string,
  options: PresignerOptions = {},
): Presign {
  const presign = createPresigner(credentials, region, options)
  const signer = async (request: PresignRequest) => {
    const date = request.date ?? new Date()
    return presign({ ...request, date, expiresIn: Math.min(request.expiresIn, secondsLeft(expires, date, expired)) })
  }
  if (options.directorySession) return signer
  return Object.assign(signer, { signing: { credentials, region, ...(expires !== undefined && { expires }) } })
}

/** Seconds credentials expiring at `expires` (epoch ms; none: never) have left at `date`, at most SigV4's 7 days; throws `expired` once none. */
export function secondsLeft(expires: number | undefined, date: Date, expired: string): number {
  const left = expires === undefined ? MAX_EXPIRES_IN : Math.floor((expires - date.getTime()) / 1000)
  if (left < 1) throw new Error(expired)
  return Math.min(left, MAX_EXPIRES_IN)
}

export interface PresignerOptions {
  /**
   * The credentials are a directory bucket's CreateSession session: signed as `s3express`, the
   * token as `X-Amz-S3session-Token` (the SDK's presignWithCredentials, as getSignedUrl presigns
   * for S3 Express One Zone).
   */
  directorySession?: boolean
}

/**
 * SigV4 query-string signing (presigned URLs) through @aws-sdk/s3-request-presigner, the design
 * card's presigner: https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-query-string-auth.html
 *
 * One S3RequestPresigner per credential and region, given a prepared HttpRequest, rather than
 * getSignedUrl per URL: that runs the S3 client's middleware stack and endpoint rules for every
 * part (bench/RESULTS.md, "Upload API"). The SDK's SignatureV4 caches the derived signing key.
 *
 * Every header given is signed as a header the page must send (the reply's `headers` says so), not
 * moved into the query: the SDK hoists `x-amz-*` headers (`x-amz-acl`) unless told not to, leaves
 * Content-Type unsigned unless named, and never signs Cache-Control unless named. The URL carries
 * `X-Amz-Content-Sha256=UNSIGNED-PAYLOAD`, as getSignedUrl's do.
 */
export function createPresigner(
  credentials: SigningCredentials,
  region: string,
  { directorySession = false }: PresignerOptions = {},
): Presign {
  const presigner = new S3RequestPresigner({
    credentials,
    region,
    sha256: Sha256,
    ...(directorySession && { service: SESSION_SIGNING_SERVICE }),
  })

  return async function presign({
    method,
    url,
    query = {},
    headers = {},
    expiresIn,
    date = new Date(),
  }: PresignRequest): Promise<string> {
    if (!Number.isInteger(expiresIn) || expiresIn < 1 || expiresIn > MAX_EXPIRES_IN) {
      throw new RangeError(`updraft: expiresIn must be 1..${MAX_EXPIRES_IN} seconds, got ${expiresIn}`)
    }
    const { origin, protocol, host, path } = splitUrl(url)
    const names = Object.keys(headers).map((name) => name.toLowerCase())
    // Copies: the SDK writes the token parameter and X-Amz-Content-Sha256 into the request it is given.
    const request = new HttpRequest({
      method,
      protocol,
      hostname: host,
      path,
      query: { ...query },
      headers: { ...headers, host },
    })
    const options = {
      expiresIn,
      signingDate: date,
      signableHeaders: new Set(names),
      unhoistableHeaders: new Set(names.filter((name) => name.startsWith('x-amz-'))),
    }
    const signed = directorySession
      ? await presigner.presignWithCredentials(request, credentials, options)
      : await presigner.presign(request, options)
    // S3 signs the path as sent: encoded once (uriEscapePath is off for S3), never normalised.
    return `${origin}${path}?${buildQueryString(signed.query ?? {})}`
  }
}

/** Cheaper than `new URL` on the hot path, and keeps the path exactly as encoded. */
function splitUrl(url: string) {
  const match = /^((https?:)\/\/([^/?#]+))(\/[^?#]*)?$/.exec(url)
  if (!match)
    throw new TypeError(`updraft: cannot presign '${url}': expected an http(s) object URL without a query string`)
  const [, origin = '', protocol = '', authority = '', path = '/'] = match
  // The Host header omits a default port, and so must the signature.
  const host = authority.replace(/^(.*):(80|443)$/, (whole, name: string, port: string) =>
    (port === '80') === (protocol === 'http:') ? name : whole,
  )
  return { origin, protocol, host, path }
}
