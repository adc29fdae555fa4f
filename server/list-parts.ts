import { ListPartsCommand } from '@aws-sdk/client-s3'
import { maxPartNumber } from '../protocol/parts.ts'
import type { ListPartsReply, StoredPart } from '../protocol/wire.ts'
import type { MultipartContext } from './multipart.ts'
import { RequestError } from './request-error.ts'
import type { TicketClaims } from './ticket.ts'

/** S3 lists at most 1000 parts per call; a 10 000-part upload takes ten. */
const PAGE = 1000

/**
 * POST …/list-parts `{ ticket }`: the parts storage holds for the ticket's upload (its bucket,
 * key and upload id, never ones the page names), so a page that reloaded re-sends only what is
 * missing. Only with `resumable` on. A gone upload (aborted, expired, completed) is a 404 the
 * engine reads as "start afresh".
 */
export async function listParts({ config, s3 }: MultipartContext, claims: TicketClaims): Promise<ListPartsReply> {
  if (!config.resumable)
    throw new RequestError(404, 'Resuming uploads is off on this server: set resumable: true to allow it')
  const { bucket, key, uploadId } = claims
  // Of unknown length (a stream: never resumed by the engine, answered all the same), up to the part cap.
  const lastPart = claims.partCount ?? maxPartNumber(claims.partSize, config.maxFileSize)
  const parts: StoredPart[] = []
  let marker: string | undefined
  for (;;) {
    const page = await s3
      .send(
        new ListPartsCommand({
          Bucket: bucket,
          Key: key,
          UploadId: uploadId,
          MaxParts: PAGE,
          PartNumberMarker: marker,
        }),
      )
      .catch((error: unknown) => {
        // S3 says NoSuchUpload; Ceph RGW 16.2 says NoSuchKey for an aborted upload.
        if ((error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) {
          throw new RequestError(404, 'The upload is gone from storage (aborted, expired or completed): start it again')
        }
        throw error
      })
    for (const part of page.Parts ?? []) {
      // Only parts the ticket's plan has (a page cannot have sent others, but storage is the truth).
      if (part.PartNumber && part.PartNumber <= lastPart && part.ETag) {
        parts.push({ partNumber: part.PartNumber, etag: part.ETag, size: part.Size ?? 0 })
      }
    }
    if (!page.IsTruncated || !page.NextPartNumberMarker) return { parts }
    marker = page.NextPartNumberMarker
  }
}
