import type { MetadataOf, PresignedReply, ServerDataOf, UploadResult } from '../protocol/wire.ts'
import type { UploadBody } from './core/body.ts'
import { warnUnknownOptions } from './core/option-names.ts'
import { runUpload } from './core/run.ts'
import { confirmUpload } from './modes/confirm.ts'
import { presignedFields, sendPresigned } from './modes/presigned-mode.ts'
import { prepareAndSend, type UploadOptions } from './modes/request.ts'

/**
 * {@link upload} for presigned mode only: the upload API presigns every request (one PUT, or each
 * part of a multipart upload, plus Complete and Abort through its `/parts`, `/complete` and
 * `/abort` routes). Pages that never use token mode import this entry (`updraft-s3/presigned`) and
 * ship no SigV4 code at all. Same options as `upload()`, but `strategy` and the token-mode-only
 * `objectHeaders` / `partHeaders`; `checksum` takes `'md5'` only (Content-MD5).
 *
 * @param file - The bytes, of any kind {@link upload} takes.
 * @param options - Every one optional; see {@link UploadOptions}.
 * @returns The stored object, `{ url, bucket, key, etag }`, once storage has confirmed it.
 * @throws What {@link upload} throws, for the same reasons and always as the promise's rejection.
 * @example
 * ```ts
 * import { uploadPresigned } from 'updraft-s3/presigned'
 *
 * const { key } = await uploadPresigned(file, {
 *   api: '/api/s3-upload',
 *   onProgress: ({ loaded, total }) => (bar.value = loaded / total),
 * })
 * ```
 */
export function uploadPresigned<Handler = unknown>(
  file: UploadBody,
  options: Omit<UploadOptions<MetadataOf<Handler>>, 'strategy' | 'objectHeaders' | 'partHeaders'> = {},
): Promise<UploadResult<ServerDataOf<Handler>>> {
  // Development builds name an option uploadPresigned() does not know; production bundles drop this (core/option-names.ts).
  try {
    if (process.env.NODE_ENV !== 'production') warnUnknownOptions('uploadPresigned', options)
  } catch {}
  return runUpload({ ...options, strategy: 'presigned' as const }, async (run) => {
    return prepareAndSend(
      file,
      run,
      async ({ reply, contentType }, body) =>
        confirmUpload(await sendPresigned(body, reply as PresignedReply, contentType, run), reply, run),
      { presigned: presignedFields },
    )
  }) as Promise<UploadResult<ServerDataOf<Handler>>>
}
