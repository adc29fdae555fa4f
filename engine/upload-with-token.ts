import type { TokenReply, UploadResult } from '../protocol/wire.ts'
import { sendWithToken } from './modes/token.ts'
import { prepareAndSend, type UploadOptions } from './request-upload.ts'
import { runUpload } from './settle.ts'

/**
 * `upload()` for token mode only: pages that never use presigned mode import this entry
 * (`updraft/token`) and ship none of its code.
 */
export function uploadWithToken(file: Blob, options: Omit<UploadOptions, 'strategy'> = {}): Promise<UploadResult> {
  return runUpload({ ...options, strategy: 'token' as const }, async (resolved) => {
    return prepareAndSend(file, resolved, ({ reply, contentType }) => sendWithToken(file, reply as TokenReply, contentType, resolved))
  })
}

export { UploadError, EndpointError, S3Error, NetworkError, UploadAbortedError, isUploadError } from './errors.ts'
export type { UploadResult } from '../protocol/wire.ts'
export type { UploadOptions } from './request-upload.ts'
