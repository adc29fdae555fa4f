import type { MetadataOf, ServerDataOf, TokenReply, UploadResult } from '../protocol/wire.ts'
import type { UploadBody } from './core/body.ts'
import { warnUnknownOptions } from './core/option-names.ts'
import { runUpload } from './core/run.ts'
import { confirmUpload } from './modes/confirm.ts'
import { prepareAndSend, type UploadOptions } from './modes/request.ts'
import { sendWithToken, tokenFields } from './modes/token-mode.ts'

/**
 * {@link upload} for token mode only: the upload API issues STS credentials allowed to write one
 * key, and the page signs its own requests to storage (SigV4), refreshing the credentials from
 * the upload API before they expire. Pages that never use presigned mode import this entry
 * (`updraft-s3/token`) and ship none of its code. Same options as `upload()`, but `strategy`.
 *
 * @param file - The bytes, of any kind {@link upload} takes.
 * @param options - Every one optional; see {@link UploadOptions}.
 * @returns The stored object, `{ url, bucket, key, etag }`, once storage has confirmed it.
 * @throws What {@link upload} throws but the multipart plan's (presigned mode's alone), for the
 * same reasons and always as the promise's rejection.
 * @example
 * ```ts
 * import { uploadWithToken } from 'updraft-s3/token'
 *
 * const { url } = await uploadWithToken(file, {
 *   apiHeaders: { 'x-csrf-token': csrfToken }, // to your API only, never to storage
 *   partConcurrency: 6,
 * })
 * ```
 */
export function uploadWithToken<Handler = unknown>(
  file: UploadBody,
  options: Omit<UploadOptions<MetadataOf<Handler>>, 'strategy'> = {},
): Promise<UploadResult<ServerDataOf<Handler>>> {
  // Development builds name an option uploadWithToken() does not know; production bundles drop this (core/option-names.ts).
  try {
    if (process.env.NODE_ENV !== 'production') warnUnknownOptions('uploadWithToken', options)
  } catch {}
  return runUpload({ ...options, strategy: 'token' as const }, async (run) => {
    return prepareAndSend(
      file,
      run,
      async ({ reply, contentType }, body) =>
        confirmUpload(await sendWithToken(body, reply as TokenReply, contentType, run), reply, run),
      { token: tokenFields },
    )
  }) as Promise<UploadResult<ServerDataOf<Handler>>>
}
