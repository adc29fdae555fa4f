import type { PresignedReply, UploadResult } from '../protocol/wire.ts'
import { sendPresigned } from './modes/presigned.ts'
import { requestUpload, type UploadOptions } from './request-upload.ts'

/**
 * `upload()` for presigned mode only. Pages that never use token mode import this entry
 * (`updraft/presigned`) and ship no SigV4 code at all.
 */
export async function uploadPresigned(
  file: Blob,
  options: Omit<UploadOptions, 'strategy' | 'objectHeaders' | 'uploadHeaders'> = {},
): Promise<UploadResult> {
  const { reply, contentType } = await requestUpload(file, { ...options, strategy: 'presigned' })
  return sendPresigned(file, reply as PresignedReply, contentType, options)
}

export { UploadError, EndpointError, S3Error, NetworkError, UploadAbortedError, isUploadError } from './errors.ts'
export type { UploadResult } from '../protocol/wire.ts'
export type { UploadOptions } from './request-upload.ts'
