import { S3Error } from './errors.ts'
import type { HttpResponse } from './transport.ts'

/** Text of the first `<tag>` in a small S3 XML reply (S3 replies are flat enough for this). */
export function xmlText(xml: string, tag: string): string | undefined {
  const match = new RegExp(`<${tag}>([^<]*)</${tag}>`).exec(xml)
  return match?.[1] === undefined ? undefined : unescapeXml(match[1])
}

const XML_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }

/**
 * The five named entities (S3's ETags arrive as `&quot;…&quot;`) and numeric ones: Go-based
 * stores write `&#34;…&#34;`, and `&#x22;` is as valid.
 */
const unescapeXml = (text: string) =>
  text.replace(/&(#x?)?(\w+);/g, (entity, numeric: string | undefined, name: string) => {
    if (!numeric) return XML_ENTITIES[name] ?? entity
    const code = parseInt(name, numeric === '#x' ? 16 : 10)
    return code <= 0x10ffff ? String.fromCodePoint(code) : entity
  })

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
    xmlText(head, 'ServerTime') ?? response.header('date'),
    response,
  )
}
