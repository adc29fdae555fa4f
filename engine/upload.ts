import type { PresignedReply, TokenReply, UploadResult } from '../protocol/wire.ts'
import { sendPresigned } from './modes/presigned.ts'
import { sendWithToken } from './modes/token.ts'
import { prepareAndSend, type UploadOptions } from './request-upload.ts'
import { runUpload } from './settle.ts'

/** Asks the endpoint for permission, then sends `file` straight to storage. */
export function upload(file: Blob, options: UploadOptions = {}): Promise<UploadResult> {
  return runUpload(options, async (resolved) => {
    // The endpoint signs every header in presigned mode: extra ones (SSE-C, tags) would be dropped silently.
    if (resolved.strategy === 'presigned' && (resolved.objectHeaders || resolved.uploadHeaders)) {
      throw new TypeError('updraft: objectHeaders and uploadHeaders (SSE-C, tags) need token mode')
    }
    return prepareAndSend(file, resolved, ({ reply, contentType }) =>
      resolved.strategy === 'presigned'
        ? sendPresigned(file, reply as PresignedReply, contentType, resolved)
        : sendWithToken(file, reply as TokenReply, contentType, resolved),
    )
  })
}
