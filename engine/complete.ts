import type { CompleteReply, UploadResult } from '../protocol/wire.ts'
import { postToEndpoint } from './endpoint.ts'
import type { ResolvedOptions } from './options.ts'

/**
 * Every upload ends at the endpoint once storage holds its bytes: `/complete` with the upload's
 * ticket, where the server verifies the object and its `onUploadComplete` answers `serverData`.
 * A presigned multipart upload's own `/complete` did both (its reply has `uploadId`); a reply
 * with no ticket comes from a next-s3-upload route, which has no `/complete`. Not cancelled by an
 * abort: the bytes are stored, and the endpoint's verdict is what the page must hear.
 */
export async function confirmUpload(
  result: UploadResult,
  reply: { ticket?: string; uploadId?: string },
  options: ResolvedOptions,
): Promise<UploadResult> {
  if (!reply.ticket || reply.uploadId) return result
  const { serverData } = await postToEndpoint<CompleteReply>(options, '/complete', { ticket: reply.ticket }, undefined)
  return { ...result, serverData }
}
