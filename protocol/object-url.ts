/** Where an object lives. No endpoint: AWS S3 in `region`. */
export interface ObjectLocation {
  /** The bucket's name, or an access point ARN. */
  bucket: string
  /** The object's key, as stored: non-empty, no `.` or `..` segments. */
  key: string
  /** The bucket's region, e.g. `us-east-1` (what SigV4 signs with; `auto` for R2). */
  region: string
  /** A custom S3-compatible store, e.g. `http://127.0.0.1:9000` or `https://ACCOUNT.r2.cloudflarestorage.com`. */
  endpoint?: string
  /** `{endpoint}/{bucket}/{key}` instead of `{bucket}.{host}/{key}`. @default false */
  forcePathStyle?: boolean
}

/**
 * The object's URL, with no query string: `https://bucket.s3.region.amazonaws.com/key` or
 * path-style. The engine sends to it; the upload API presigns it and reports it.
 * @throws TypeError when the bucket holds a `/` outside an ARN, or the key is empty or has `.`/`..` segments
 */
export function objectUrl({ bucket, key, region, endpoint, forcePathStyle }: ObjectLocation): string {
  if (!bucket || (bucket.includes('/') && !bucket.startsWith('arn:'))) {
    throw new TypeError(`updraft: bucket must be a bucket name (a '/' is allowed only in an ARN), got '${bucket}'`)
  }
  if (!key || /(^|\/)\.\.?(\/|$)/.test(key)) {
    // URL parsers resolve `.` and `..` segments, which would silently write another key.
    throw new TypeError(`updraft: key must be non-empty with no '.' or '..' segments, got '${key}'`)
  }
  const base = new URL(endpoint ?? `https://s3.${region}.amazonaws.com`)
  const path = base.pathname.replace(/\/$/, '')
  const encodedKey = encodeKey(key)
  // Dotted bucket names break TLS on virtual-hosted URLs, and an IP address has no subdomains:
  // both go path-style, as S3's endpoint rules send them (protocol/endpoint-rules.ts has the rest).
  return forcePathStyle || bucket.includes('.') || /^[\d.]+$|^\[/.test(base.hostname)
    ? `${base.origin}${path}/${bucket}/${encodedKey}`
    : `${base.protocol}//${bucket}.${base.host}${path}/${encodedKey}`
}

/** RFC 3986 encoding that S3's SigV4 canonical path expects; `/` stays a separator. */
export const encodeKey = (key: string) => rfc3986(key).replace(/%2F/g, '/')

/** SigV4's URI encoding: every character but A-Z a-z 0-9 - _ . ~ escaped (encodeURIComponent leaves `!'()*`). */
export const rfc3986 = (text: string) =>
  encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
