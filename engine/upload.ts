import type { PresignedReply, TokenReply, UploadResult } from '../protocol/wire.ts'
import { sendPresigned } from './modes/presigned.ts'
import { sendWithToken } from './modes/token.ts'
import { requestUpload, type UploadOptions } from './request-upload.ts'
import { runUpload } from './settle.ts'

/**
 * Uploads `file` from the page straight to storage. First asks the endpoint (`endpoint`, by
 * default `/api/s3-upload`) for permission: short-lived credentials for one key (token mode, the
 * default) or presigned URLs (`strategy: 'presigned'`). Then sends one PUT for a body of up to
 * `partSize` bytes, or a parallel multipart upload for a larger one, retrying what can be retried
 * and cleaning up a failed or aborted multipart upload in the background.
 *
 * Pages that use one mode only ship less with {@link uploadWithToken} (`updraft/token`) or
 * {@link uploadPresigned} (`updraft/presigned`).
 *
 * @param file - The bytes: a `File` (its name and type go to the endpoint) or any `Blob`.
 * @param options - Every one optional; see {@link UploadOptions}.
 * @returns The stored object, `{ url, bucket, key, etag }`, once storage has confirmed it.
 * @throws {@link EndpointError} the endpoint refused (`message` is its own `error` text: too
 * large, type not allowed, not authorized) or still failed (5xx, 429) after `maxAttempts`.
 * @throws {@link S3Error} storage refused a request (`code`: `AccessDenied`, `NoSuchBucket`,
 * `EntityTooSmall`, …), or still failed after `maxAttempts`.
 * @throws {@link NetworkError} a request got no reply (offline, a CORS refusal, a stall of
 * `stallTimeout`) on every attempt.
 * @throws {@link UploadAbortedError} (`name` `'AbortError'`, message `Upload aborted`) `signal`
 * aborted before storage committed the object; cleanup goes on in the background (`onCleanup`).
 * @throws {@link UploadError} a part's ETag was unreadable (the bucket's CORS lacks
 * `ExposeHeaders: ETag`), or the endpoint's multipart plan does not fit the file.
 * @throws `RangeError`, `TypeError` an invalid option (`partConcurrency: 0`, `maxAttempts: 1.5`,
 * …): a bug in the calling code, deliberately not an `UploadError`.
 *
 * Every error arrives as the promise's rejection, never thrown synchronously.
 * @example
 * ```ts
 * import { isUploadError, upload } from 'updraft'
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
 *   console.warn(error.name, error.message) // e.g. EndpointError: File type not allowed
 * }
 * ```
 */
export function upload(file: Blob, options: UploadOptions = {}): Promise<UploadResult> {
  return runUpload(options, async (resolved) => {
    // The endpoint signs every header in presigned mode: extra ones (SSE-C, tags) would be dropped silently.
    if (resolved.strategy === 'presigned' && (resolved.objectHeaders || resolved.uploadHeaders)) {
      throw new TypeError('updraft: objectHeaders and uploadHeaders (SSE-C, tags) need token mode')
    }
    const { reply, contentType } = await requestUpload(file, resolved)
    return resolved.strategy === 'presigned'
      ? sendPresigned(file, reply as PresignedReply, contentType, resolved)
      : sendWithToken(file, reply as TokenReply, contentType, resolved)
  })
}
