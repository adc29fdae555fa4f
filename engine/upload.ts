import type { PresignedReply, TokenReply, UploadResult } from '../protocol/wire.ts'
import { sendPresigned } from './modes/presigned.ts'
import { sendWithToken } from './modes/token.ts'
import { requestUpload, type UploadOptions } from './request-upload.ts'

/** Asks the endpoint for permission, then sends `file` straight to storage. */
export async function upload(file: Blob, options: UploadOptions = {}): Promise<UploadResult> {
  // The endpoint signs every header in presigned mode: extra ones (SSE-C, tags) would be dropped silently.
  if (options.strategy === 'presigned' && (options.objectHeaders || options.uploadHeaders)) {
    throw new TypeError('updraft: objectHeaders and uploadHeaders (SSE-C, tags) need token mode')
  }
  const { reply, contentType } = await requestUpload(file, options)
  return options.strategy === 'presigned'
    ? sendPresigned(file, reply as PresignedReply, contentType, options)
    : sendWithToken(file, reply as TokenReply, contentType, options)
}
