import { createHash, createHmac } from 'node:crypto'

export interface SigningCredentials {
  accessKeyId: string
  secretAccessKey: string
  sessionToken?: string
}

/** SigV4's limit on X-Amz-Expires: a presigned URL lives at most 7 days. */
export const MAX_EXPIRES_IN = 604_800

export interface QueryPresignRequest {
  method: string
  /** The object URL as `objectUrl` builds it: path already RFC 3986-encoded, no query string. */
  url: string
  /** Operation parameters, e.g. `{ partNumber: '3', uploadId }`; raw values, encoded here. */
  query?: Record<string, string>
  /** Headers the request must carry, signed into the URL (host is added). */
  headers?: Record<string, string>
  /** Seconds, 1..604800 (SigV4's limit). */
  expiresIn: number
  /** @default now */
  date?: Date
}

/**
 * SigV4 query-string signing (presigned URLs) for S3, synchronous on node:crypto:
 * https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-query-string-auth.html
 *
 * Why not @aws-sdk/s3-request-presigner: part URLs are signed on the hot path of big uploads, and
 * the SDK runs a middleware stack, endpoint rules and async hashing per URL. This does one SHA-256
 * and one HMAC per URL; the four HMACs that derive the signing key run once per day.
 * It emits the same query parameters as the SDK (`X-Amz-Content-Sha256=UNSIGNED-PAYLOAD` included),
 * so for the same inputs the URLs are identical; tests/server-presigner.test.ts holds it to that.
 */
export function createQueryPresigner(credentials: SigningCredentials, region: string, service = 's3', tokenParam = 'X-Amz-Security-Token') {
  let cachedDay = ''
  let cachedKey: Buffer = Buffer.alloc(0)
  const signingKey = (day: string) => {
    if (day !== cachedDay) {
      const dateKey = hmac(`AWS4${credentials.secretAccessKey}`, day)
      cachedKey = hmac(hmac(hmac(dateKey, region), service), 'aws4_request')
      cachedDay = day
    }
    return cachedKey
  }

  return function presign({ method, url, query = {}, headers = {}, expiresIn, date = new Date() }: QueryPresignRequest): string {
    if (!Number.isInteger(expiresIn) || expiresIn < 1 || expiresIn > MAX_EXPIRES_IN) {
      throw new RangeError(`updraft: expiresIn must be 1..${MAX_EXPIRES_IN} seconds, got ${expiresIn}`)
    }
    const { origin, host, path } = splitUrl(url)
    const amzDate = date.toISOString().replace(/[-:]|\.\d{3}/g, '')
    const day = amzDate.slice(0, 8)
    const scope = `${day}/${region}/${service}/aws4_request`

    const signed: Record<string, string> = { host }
    for (const [name, value] of Object.entries(headers)) signed[name.toLowerCase()] = value.trim().replace(/\s+/g, ' ')
    const headerNames = Object.keys(signed).sort()
    const signedHeaders = headerNames.join(';')

    const params: Record<string, string> = {
      ...query,
      'X-Amz-Algorithm': 'AWS4-HMAC-SHA256',
      'X-Amz-Content-Sha256': 'UNSIGNED-PAYLOAD',
      'X-Amz-Credential': `${credentials.accessKeyId}/${scope}`,
      'X-Amz-Date': amzDate,
      'X-Amz-Expires': String(expiresIn),
      'X-Amz-SignedHeaders': signedHeaders,
    }
    // `tokenParam`: a directory bucket's session token goes as X-Amz-S3session-Token (server/directory-signer.ts).
    if (credentials.sessionToken) params[tokenParam] = credentials.sessionToken
    const pairs = Object.entries(params)
      .map(([name, value]) => [encode(name), encode(value)] as const)
      .sort(([a, av], [b, bv]) => (a < b ? -1 : a > b ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
      .map(([name, value]) => `${name}=${value}`)
    const canonicalQuery = pairs.join('&')

    const canonicalRequest = [
      method,
      path, // S3 signs the path as sent: encoded once, never normalised.
      canonicalQuery,
      headerNames.map((name) => `${name}:${signed[name]}\n`).join(''),
      signedHeaders,
      'UNSIGNED-PAYLOAD',
    ].join('\n')
    const stringToSign = `AWS4-HMAC-SHA256\n${amzDate}\n${scope}\n${sha256Hex(canonicalRequest)}`
    const signature = createHmac('sha256', signingKey(day)).update(stringToSign).digest('hex')
    // In sorted place, as the SDK puts it, so equal inputs give equal URLs.
    const at = pairs.findIndex((pair) => pair.slice(0, pair.indexOf('=')) > 'X-Amz-Signature')
    pairs.splice(at === -1 ? pairs.length : at, 0, `X-Amz-Signature=${signature}`)
    return `${origin}${path}?${pairs.join('&')}`
  }
}

export type QueryPresigner = ReturnType<typeof createQueryPresigner>

/**
 * Presigns with the credentials current when it was handed out (a session's, a directory bucket
 * session's, or the server's own key); `expiresIn` is cut to what those credentials have left.
 */
export type Presign = (request: Parameters<QueryPresigner>[0]) => string

const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest()
const sha256Hex = (data: string) => createHash('sha256').update(data).digest('hex')

/** RFC 3986 unreserved characters stay; everything else is %XX, as SigV4 requires. */
const encode = (value: string) =>
  encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)

/** Cheaper than `new URL` on the hot path, and keeps the path exactly as encoded. */
function splitUrl(url: string) {
  const match = /^(https?:\/\/([^/?#]+))(\/[^?#]*)?$/.exec(url)
  if (!match) throw new TypeError(`updraft: cannot presign '${url}': expected an http(s) object URL without a query string`)
  const [, origin = '', authority = '', path = '/'] = match
  // The Host header omits a default port, and so must the signature.
  const host = authority.replace(/^(.*):(80|443)$/, (whole, name: string, port: string) =>
    (port === '80') === origin.startsWith('http:') ? name : whole,
  )
  return { origin, host, path }
}
