import type { MetadataOf, ServerDataOf, UploadResult } from '../protocol/wire.ts'
import { confirmUpload } from './modes/confirm.ts'
import { presignedFields, sendPresigned } from './modes/presigned.ts'
import { sendWithToken, tokenFields } from './modes/token.ts'
import { prepareAndSend, type UploadOptions } from './modes/request.ts'
import { defaultStrategy } from './modes/default-strategy.ts'
import { runUpload } from './core/run.ts'
import { warnUnknownOptions } from './core/option-names.ts'
import type { UploadBody } from './core/body.ts'

/**
 * Uploads `file` from the page straight to storage. First asks your upload API (`api`, by default
 * `/api/s3-upload`) for permission: short-lived credentials for one key (token mode, the default,
 * where the server has an STS; an API without one is asked again for presigned URLs, once per page)
 * or presigned URLs (`strategy: 'presigned'`, on every store). Then sends one PUT for a body of up to
 * `partSize` bytes, or a parallel multipart upload for a larger one, retrying what can be retried
 * and cleaning up a failed or aborted multipart upload in the background. Once storage has the
 * bytes, the endpoint verifies them (`/complete`: size, type, first bytes) and may answer data of
 * its own (`result.serverData`). `Handler`: `typeof` the server's handler, where page and server
 * share a TypeScript project, types `metadata` and `result.serverData`.
 *
 * Pages that use one mode only ship less with {@link uploadWithToken} (`updraft-s3/token`) or
 * {@link uploadPresigned} (`updraft-s3/presigned`).
 *
 * @param file - The bytes: a `File` (its name and type go to the endpoint) or any `Blob`; or, with
 * the `filename` and `contentType` options, a `Uint8Array` (a Node `Buffer`), a
 * `ReadableStream<Uint8Array>` or an async iterable of `Uint8Array` (a Node stream), of a known
 * length (the `size` option) or not (see `uploadObject`).
 * @param options - Every one optional; see {@link UploadOptions}.
 * @returns The stored object, `{ url, bucket, key, etag, serverData? }`, once storage has confirmed it and the endpoint verified it.
 * @throws {@link ApiError} your upload API refused (`message` is its own `error` text: too
 * large, type not allowed, not authorized) or still failed (5xx, 429) after `retry.limit` retries.
 * @throws {@link S3Error} storage refused a request (`code`: `AccessDenied`, `NoSuchBucket`,
 * `EntityTooSmall`, …), or still failed after `retry.limit` retries.
 * @throws {@link NetworkError} a request got no reply (offline, a CORS refusal, a stall of
 * `stallTimeout`) on every attempt.
 * @throws {@link UploadAbortedError} (`name` `'AbortError'`, message `Upload aborted`) `signal`
 * aborted before storage committed the object; cleanup goes on in the background (`onCleanup`).
 * @throws {@link UploadError} a part's ETag was unreadable (the bucket's CORS lacks
 * `ExposeHeaders: ETag`), or the API's multipart plan does not fit the file.
 * @throws `RangeError`, `TypeError` an invalid option (`partConcurrency: 0`, `retry: { limit: 1.5 }`,
 * …): a bug in the calling code, deliberately not an `UploadError`.
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
    prepareAndSend(file, run, async ({ reply, contentType }, body) => {
      // The reply says which mode the API granted (a page that named none may have been sent presigned).
      const sent = await ('token' in reply ? sendWithToken(body, reply, contentType, run) : sendPresigned(body, reply, contentType, run))
      return confirmUpload(sent, reply, run)
    }, { token: tokenFields, presigned: presignedFields }, defaultStrategy),
  ) as Promise<UploadResult<ServerDataOf<Handler>>>
}
