import type { MetadataOf, PresignedReply, ServerDataOf, TokenReply, UploadResult } from '../protocol/wire.ts'
import { confirmUpload } from './complete.ts'
import { sendPresigned } from './modes/presigned.ts'
import { sendWithToken } from './modes/token.ts'
import { requestUpload, type UploadOptions } from './request-upload.ts'
import { runUpload } from './settle.ts'

/**
 * Asks the endpoint for permission, sends `file` straight to storage, then has the endpoint
 * verify it (`/complete`). `Handler`: `typeof` the server's handler, where page and server share
 * a TypeScript project, types `metadata` and `result.serverData`.
 */
export function upload<Handler = unknown>(
  file: Blob,
  options: UploadOptions<MetadataOf<Handler>> = {},
): Promise<UploadResult<ServerDataOf<Handler>>> {
  return runUpload(options, async (resolved) => {
    // The endpoint signs every header in presigned mode: extra ones (SSE-C, tags) would be dropped silently.
    if (resolved.strategy === 'presigned' && (resolved.objectHeaders || resolved.uploadHeaders)) {
      throw new TypeError('updraft: objectHeaders and uploadHeaders (SSE-C, tags) need token mode')
    }
    const { reply, contentType } = await requestUpload(file, resolved)
    const sent = await (resolved.strategy === 'presigned'
      ? sendPresigned(file, reply as PresignedReply, contentType, resolved)
      : sendWithToken(file, reply as TokenReply, contentType, resolved))
    return confirmUpload(sent, reply, resolved)
  }) as Promise<UploadResult<ServerDataOf<Handler>>>
}
