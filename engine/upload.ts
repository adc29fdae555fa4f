import type { MetadataOf, PresignedReply, ServerDataOf, TokenReply, UploadResult } from '../protocol/wire.ts'
import { confirmUpload } from './flow/confirm.ts'
import { sendPresigned } from './flow/presigned-mode.ts'
import { sendWithToken, tokenFields } from './flow/token-mode.ts'
import { DEFAULT_STRATEGY, prepareAndSend, type UploadOptions } from './flow/request.ts'
import { runUpload } from './run.ts'
import type { UploadBody } from './flow/body.ts'
import { warnUnknownOptions } from './option-names.ts'

/**
 * Uploads `file` from the page straight to storage. First asks your upload API (`api`, by default
 * `/api/s3-upload`) for permission: presigned URLs (the default, on every store) or short-lived
 * credentials for one key (`strategy: 'token'`, where the server has an STS). Then sends one PUT for a body of up to
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
 *     strategy: 'presigned',
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
  // Development builds name an option upload() does not know; production bundles drop this (option-names.ts).
  try {
    if (process.env.NODE_ENV !== 'production') warnUnknownOptions('upload', options)
  } catch {}
  const presigned = (options.strategy ?? DEFAULT_STRATEGY) === 'presigned'
  return runUpload({ ...options, strategy: presigned ? ('presigned' as const) : ('token' as const) }, async (run) => {
    // The API signs every header in presigned mode: extra ones (SSE-C, tags) would be dropped silently.
    if (presigned && (options.objectHeaders || options.partHeaders)) {
      throw new TypeError("updraft: objectHeaders and partHeaders (SSE-C, tags) need strategy: 'token'")
    }
    return prepareAndSend(file, run, async ({ reply, contentType }, body) => {
      const sent = await (presigned
        ? sendPresigned(body, reply as PresignedReply, contentType, run)
        : sendWithToken(body, reply as TokenReply, contentType, run))
      return confirmUpload(sent, reply, run)
    }, presigned ? undefined : tokenFields)
  }) as Promise<UploadResult<ServerDataOf<Handler>>>
}
