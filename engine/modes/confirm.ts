import type { CompleteReply, UploadResult } from '../../protocol/wire.ts'
import type { UploadRun } from '../core/run.ts'
import { postToApi } from '../transport/api.ts'

/**
 * Every upload ends at the upload API once storage holds its bytes: `/complete` with the upload's
 * ticket, where the server verifies the object and its `onUploadComplete` answers `serverData`.
 * A multipart upload the upload API created (its reply has `uploadId`) was completed there, which
 * did both; a reply with no ticket comes from a next-s3-upload route, which has no `/complete`.
 * An abort ends it at once, as any other (AbortError): storage holds the object, but nothing
 * recorded it, which the app's reconciliation and the lifecycle rule are for (docs/completion.md).
 * Waiting for the upload API instead would leave the upload unsettled for as long as it is down.
 */
export async function confirmUpload(
  result: UploadResult,
  reply: { ticket?: string; uploadId?: string },
  run: UploadRun,
): Promise<UploadResult> {
  if (!reply.ticket || reply.uploadId) return result
  // Storage's commit is over: from here the caller's abort cancels, and `waitForNetwork` waits only until it.
  run.phase = 'confirming'
  const confirmed = await completeAtApi(reply.ticket, run)
  // Storage's own word first; where its reply had no ETag (RGW's Complete), the upload API's HEAD's.
  const etag = result.etag || confirmed.etag
  await run.checkETag?.(etag)
  // Where the object is, as storage answered; what the upload API adds (`serverData`).
  return { ...confirmed, ...result, etag }
}

/**
 * `/complete` with the ticket; with the parts' `etags`, of a multipart upload the upload API created
 * (presigned mode, token mode's `createMultipart`), which the server then completes first.
 */
export async function completeAtApi(ticket: string, run: UploadRun, etags?: string[]): Promise<UploadResult> {
  const parts = etags?.map((etag, i) => ({ partNumber: i + 1, etag }))
  const { url, bucket, key, etag, serverData } = await postToApi<CompleteReply>(
    run,
    '/complete',
    { ticket, parts },
    run.options.signal,
  )
  // Only the result's own fields: whatever else the upload API sends stays out.
  return { url, bucket, key, etag, serverData }
}
