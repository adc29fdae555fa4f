import { S3Error } from './errors.ts'
import type { HttpResponse } from './transport.ts'

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
