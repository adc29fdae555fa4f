import type { MetadataOf, PresignedReply, ServerDataOf, UploadResult } from '../protocol/wire.ts'
import { confirmUpload } from './complete.ts'
import { sendPresigned } from './modes/presigned.ts'
import { requestUpload, type UploadOptions } from './request-upload.ts'
import { runUpload } from './settle.ts'

/**
 * `upload()` for presigned mode only. Pages that never use token mode import this entry
 * (`updraft/presigned`) and ship no SigV4 code at all.
 */
export function uploadPresigned<Handler = unknown>(
  file: Blob,
  options: Omit<UploadOptions<MetadataOf<Handler>>, 'strategy' | 'objectHeaders' | 'uploadHeaders'> = {},
): Promise<UploadResult<ServerDataOf<Handler>>> {
  return runUpload({ ...options, strategy: 'presigned' as const }, async (resolved) => {
    const { reply, contentType } = await requestUpload(file, resolved)
    return confirmUpload(await sendPresigned(file, reply as PresignedReply, contentType, resolved), reply, resolved)
  }) as Promise<UploadResult<ServerDataOf<Handler>>>
}

export { UploadError, EndpointError, S3Error, NetworkError, UploadAbortedError, isUploadError } from './errors.ts'
export type { UploadResult } from '../protocol/wire.ts'
export type { UploadOptions } from './request-upload.ts'
