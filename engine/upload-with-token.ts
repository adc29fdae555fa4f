import type { MetadataOf, ServerDataOf, TokenReply, UploadResult } from '../protocol/wire.ts'
import { confirmUpload } from './complete.ts'
import { sendWithToken } from './modes/token.ts'
import { requestUpload, type UploadOptions } from './request-upload.ts'
import { runUpload } from './settle.ts'

/**
 * `upload()` for token mode only: pages that never use presigned mode import this entry
 * (`updraft/token`) and ship none of its code.
 */
export function uploadWithToken<Handler = unknown>(
  file: Blob,
  options: Omit<UploadOptions<MetadataOf<Handler>>, 'strategy'> = {},
): Promise<UploadResult<ServerDataOf<Handler>>> {
  return runUpload({ ...options, strategy: 'token' as const }, async (resolved) => {
    const { reply, contentType } = await requestUpload(file, resolved)
    return confirmUpload(await sendWithToken(file, reply as TokenReply, contentType, resolved), reply, resolved)
  }) as Promise<UploadResult<ServerDataOf<Handler>>>
}

export { UploadError, EndpointError, S3Error, NetworkError, UploadAbortedError, isUploadError } from './errors.ts'
export type { UploadResult } from '../protocol/wire.ts'
export type { UploadOptions } from './request-upload.ts'
