import type { PresignedReply, UploadResult } from '../protocol/wire.ts'
import { sendPresigned } from './modes/presigned.ts'
import { prepareAndSend, type UploadOptions } from './request-upload.ts'
import { runUpload } from './settle.ts'

/**
 * `upload()` for presigned mode only. Pages that never use token mode import this entry
 * (`updraft/presigned`) and ship no SigV4 code at all.
 */
export function uploadPresigned(
  file: Blob,
  options: Omit<UploadOptions, 'strategy' | 'objectHeaders' | 'uploadHeaders'> = {},
): Promise<UploadResult> {
  return runUpload({ ...options, strategy: 'presigned' as const }, async (resolved) => {
    return prepareAndSend(file, resolved, ({ reply, contentType }) => sendPresigned(file, reply as PresignedReply, contentType, resolved))
  })
}

export { UploadError, EndpointError, S3Error, NetworkError, UploadAbortedError, isUploadError } from './errors.ts'
export type { UploadResult } from '../protocol/wire.ts'
export type { UploadOptions } from './request-upload.ts'
