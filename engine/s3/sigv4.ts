import { rfc3986 } from '../../protocol/object-url.ts'

/**
 * A request to sign for S3 with SigV4 in the Authorization header. The body is not hashed here:
 * `headers['x-amz-content-sha256']` names the payload (UNSIGNED-PAYLOAD in the engine).
 */
export interface SigV4Request {
  method: string
  /** The object's URL (protocol/object-url.ts, or `locate`'s) plus its query string. */
  url: string
  /** Lower-case names, as the engine sends them (a name's case is lowered either way). */
  headers: Record<string, string>
  accessKeyId: string
  secretAccessKey: string
  /** Temporary credentials' token, sent and signed as `x-amz-security-token`. */
  sessionToken?: string
  /** `s3`, or `s3express` for a directory bucket. */
  service: string
  region: string
  /** `YYYYMMDDTHHMMSSZ`: the servers' time (engine/clock.ts), not this machine's. */
  datetime: string
  /** Signing keys derived so far: a day's key for a secret, region and service costs four HMACs once. */
  cache: Map<string, CryptoKey>
}

/**
 * SigV4 header signing for S3, on Web Crypto (browsers, Node ≥ 22, workerd): the headers to send,
 * `authorization`, `x-amz-date` and the session token among them, and the URL. Steps and names as
 * in https://docs.aws.amazon.com/AmazonS3/latest/API/sig-v4-header-based-auth.html; only what
 * the engine's requests need (no query presigning, no body hashing, S3's path rule for every service).
 */
export async function signV4({ method, url, headers, accessKeyId, secretAccessKey, sessionToken, service, region, datetime, cache }: SigV4Request) {
  const { host, pathname, searchParams, href } = new URL(url)
  // Headers lowers names, trims values and refuses what HTTP cannot carry (a TypeError here,
  // before any attempt, as aws4fetch threw: fetch would reject it as if the network failed).
  const sent = new Headers(headers)
  sent.set('x-amz-date', datetime)
  if (sessionToken) sent.set('x-amz-security-token', sessionToken)
  // Every header is signed, host too (S3 wants every x-amz-* one), but content-type, as aws4fetch
  // left it: browsers may rewrite it (XHR adds a charset to a string body's), and S3 does not ask.
  const names = ['host', ...sent.keys()].filter((name) => name !== 'content-type').sort()
  const signedHeaders = names.join(';')
  const scope = `${datetime.slice(0, 8)}/${region}/${service}/aws4_request`
  const canonicalRequest = [
    method,
    // S3 signs the path as sent: protocol/object-url.ts encoded the key once, RFC 3986, as S3
    // wants it (never twice, unlike other services; s3express and s3-outposts alike).
    pathname,
    // Pairs sorted by key, then value; a space sorts below every encoded character, so a key that
    // is another's prefix comes first, as the spec's byte order has it (`?uploads` signs `uploads=`).
    [...searchParams].map(([key, value]) => `${rfc3986(key)} ${rfc3986(value)}`).sort().join('&').replace(/ /g, '='),
    names.map((name) => `${name}:${name === 'host' ? host : sent.get(name)!.replace(/\s+/g, ' ')}\n`).join(''),
    signedHeaders,
    sent.get('x-amz-content-sha256'),
  ].join('\n')
  const cacheKey = `${secretAccessKey}/${scope}`
  let key = cache.get(cacheKey)
  if (!key) {
    // kSigning = HMAC(HMAC(HMAC(HMAC("AWS4" + secret, day), region), service), "aws4_request")
    let derived: BufferSource = utf8(`AWS4${secretAccessKey}`)
    for (const part of scope.split('/')) derived = await hmac(await hmacKey(derived), part)
    cache.set(cacheKey, (key = await hmacKey(derived)))
  }
  const stringToSign = `AWS4-HMAC-SHA256\n${datetime}\n${scope}\n${hex(await crypto.subtle.digest('SHA-256', utf8(canonicalRequest)))}`
  sent.set('authorization', `AWS4-HMAC-SHA256 Credential=${accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${hex(await hmac(key, stringToSign))}`)
  return { url: href, headers: Object.fromEntries(sent) }
}

const utf8 = (text: string) => new TextEncoder().encode(text)

const hmacKey = (raw: BufferSource) => crypto.subtle.importKey('raw', raw, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])

const hmac = (key: CryptoKey, data: string) => crypto.subtle.sign('HMAC', key, utf8(data))

const hex = (bytes: ArrayBuffer) => [...new Uint8Array(bytes)].map((byte) => byte.toString(16).padStart(2, '0')).join('')
