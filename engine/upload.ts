import type { MetadataOf, ServerDataOf, UploadResult } from '../protocol/wire.ts'
import type { UploadBody } from './core/body.ts'
import { warnUnknownOptions } from './core/option-names.ts'
import { runUpload } from './core/run.ts'
import { confirmUpload } from './modes/confirm.ts'
import { defaultStrategy } from './modes/default-strategy.ts'
import { presignedFields, sendPresigned } from './modes/presigned-mode.ts'
import { prepareAndSend, type UploadOptions } from './modes/request.ts'
import { sendWithToken, tokenFields } from './modes/token-mode.ts'

/**
 * Uploads `file` from the page straight to storage, after asking your upload API (`api`, by
 * default `/api/s3-upload`) for permission: credentials for one key (token mode, the default) or
 * presigned URLs (`strategy: 'presigned'`, and once per page where the API has no STS). A body
 * over `partSize` goes as a parallel multipart upload; the API verifies the stored object at
 * `/complete`. `Handler`, `typeof` your server's handler, types `metadata` and `result.serverData`.
 * One mode only ships less: {@link uploadWithToken}, {@link uploadPresigned}.
 *
 * @param file - The bytes: a `File` (its name and type go to the upload API) or any `Blob`; or, with
 * the `filename` and `contentType` options, a `Uint8Array` (a Node `Buffer`), a
 * `ReadableStream<Uint8Array>` or an async iterable of `Uint8Array` (a Node stream), of a known
 * length (the `size` option) or not (see `uploadObject`).
 * @param options - Every one optional; see {@link UploadOptions}.
 * @returns The stored object, `{ url, bucket, key, etag, serverData? }`, once storage has confirmed it and the upload API verified it.
 * @throws {@link ApiError} your upload API refused (its own `error` text), or failed past `retry.limit`.
 * @throws {@link S3Error} storage refused (`code`: `AccessDenied`, `NoSuchBucket`, …), or failed past `retry.limit`.
 * @throws {@link NetworkError} no reply on any attempt (offline, a CORS refusal, a stall of `stallTimeout`).
 * @throws {@link UploadAbortedError} `signal` aborted before storage committed; cleanup goes on (`onCleanup`).
 * @throws {@link UploadError} an unreadable ETag (CORS without `ExposeHeaders: ETag`), or an API plan that does not fit the file.
 * @throws `RangeError`, `TypeError` an invalid option: a bug in the calling code, so not an `UploadError`.
 *
 * Every error arrives as the promise's rejection, never thrown synchronously.
 * @example
 * ```ts
 * import { isUploadError, upload } from 'updraft-s3'
 *
 * const controller = new AbortController() // controller.abort() cancels the upload
 * try {
 *   const { key, url } = await upload(file, {
 *     signal: controller.signal,
 *     onProgress: ({ loaded, total }) => console.log(`${Math.round((100 * loaded) / total)}%`),
 *   })
 *   console.log('stored as', key, url)
 * } catch (error) {
 *   if (!isUploadError(error)) throw error // a bug, not an upload failure
 *   console.warn(error.name, error.message) // e.g. ApiError: File type not allowed
 * }
 * ```
 */
export function upload<Handler = unknown>(
  file: UploadBody,
  options: UploadOptions<MetadataOf<Handler>> = {},
): Promise<UploadResult<ServerDataOf<Handler>>> {
  // Development builds name an option upload() does not know; production bundles drop this (core/option-names.ts).
  try {
    if (process.env.NODE_ENV !== 'production') warnUnknownOptions('upload', options)
  } catch {}
  return runUpload(options, (run) =>
    prepareAndSend(
      file,
      run,
      async ({ reply, contentType }, body) => {
        // The reply says which mode the API granted (a page that named none may have been sent presigned).
        const sent = await ('token' in reply
          ? sendWithToken(body, reply, contentType, run)
          : sendPresigned(body, reply, contentType, run))
        return confirmUpload(sent, reply, run)
      },
      { token: tokenFields, presigned: presignedFields },
      defaultStrategy,
    ),
  ) as Promise<UploadResult<ServerDataOf<Handler>>>
}
