import type { TokenReply } from './protocol.ts'
import { requestUpload, type UploadOptions } from './request-upload.ts'
import { sendWithToken } from './token.ts'
import type { UploadResult } from './transfer.ts'

/**
 * `upload()` for token mode only: pages that never use presigned mode import this entry
 * (`updraft/token`) and ship none of its code.
 */
export async function uploadWithToken(file: Blob, options: Omit<UploadOptions, 'strategy'> = {}): Promise<UploadResult> {
  const { reply, contentType } = await requestUpload(file, { ...options, strategy: 'token' })
  return sendWithToken(file, reply as TokenReply, contentType, options)
}

export { UploadError, EndpointError, S3Error, NetworkError, UploadAbortedError, isUploadError } from './errors.ts'
export type { UploadResult } from './transfer.ts'
export type { UploadOptions } from './request-upload.ts'
