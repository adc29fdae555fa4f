import { xmlText } from '../../protocol/xml.ts'
import { S3Error } from '../core/errors.ts'
import type { HttpResponse } from '../transport/transport.ts'

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
