import { S3Error } from './errors.ts'
import type { HttpResponse } from './transport.ts'

/** Where an object lives. No endpoint: AWS S3 in `region`. */
export interface ObjectLocation {
  bucket: string
  key: string
  region: string
  /** A custom S3-compatible store, e.g. `http://127.0.0.1:9000` or `https://ACCOUNT.r2.cloudflarestorage.com`. */
  endpoint?: string
  /** `{endpoint}/{bucket}/{key}` instead of `{bucket}.{host}/{key}`. */
  forcePathStyle?: boolean
}

/** The object's URL, with no query string: `https://bucket.s3.region.amazonaws.com/key` or path-style. */
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
  // Dotted bucket names break TLS on virtual-hosted URLs, so they go path-style as the SDK does.
  return forcePathStyle || bucket.includes('.')
    ? `${base.origin}${path}/${bucket}/${encodedKey}`
    : `${base.protocol}//${bucket}.${base.host}${path}/${encodedKey}`
}

/** RFC 3986 encoding that S3's SigV4 canonical path expects; `/` stays a separator. */
const encodeKey = (key: string) =>
  encodeURIComponent(key)
    .replace(/%2F/g, '/')
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)

/** Text of the first `<tag>` in a small S3 XML reply (S3 replies are flat enough for this). */
export function xmlText(xml: string, tag: string): string | undefined {
  const match = new RegExp(`<${tag}>([^<]*)</${tag}>`).exec(xml)
  return match?.[1] === undefined ? undefined : unescapeXml(match[1])
}

const XML_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }

/** S3 escapes only with the five named entities (ETags arrive as `&quot;…&quot;`). */
const unescapeXml = (text: string) => text.replace(/&(\w+);/g, (entity, name: string) => XML_ENTITIES[name] ?? entity)

const escapeXml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;')

/** Body of CompleteMultipartUpload. */
export const completeXml = (etags: readonly string[]) =>
  `<CompleteMultipartUpload xmlns="http://s3.amazonaws.com/doc/2006-03-01/">${etags
    .map((etag, i) => `<Part><PartNumber>${i + 1}</PartNumber><ETag>${escapeXml(etag)}</ETag></Part>`)
    .join('')}</CompleteMultipartUpload>`

/**
 * Throws the S3 error a reply carries: any status >= 300, and also a 200 whose body starts an
 * `<Error>` (CompleteMultipartUpload can fail after its 200 headers are sent; the SDK reads up
 * to 3000 bytes for it).
 */
export function throwIfS3Error(response: HttpResponse): HttpResponse {
  const head = response.body.slice(0, 3000)
  if (response.status < 300 && !head.includes('<Error>')) return response
  throw new S3Error(
    xmlText(head, 'Code') ?? `Http${response.status}`,
    xmlText(head, 'Message') ?? 'S3 request failed',
    response.status,
    xmlText(head, 'RequestId') ?? response.header('x-amz-request-id') ?? undefined,
    response.header('retry-after'),
  )
}
