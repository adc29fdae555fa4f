import type { MetadataOf, PresignedReply, ServerDataOf, UploadResult } from '../protocol/wire.ts'
import { confirmUpload } from './modes/confirm.ts'
import { presignedFields, sendPresigned } from './modes/presigned.ts'
import { prepareAndSend, type UploadOptions } from './modes/request.ts'
import { runUpload } from './core/run.ts'
import { warnUnknownOptions } from './core/option-names.ts'
import type { UploadBody } from './core/body.ts'

/**
 * {@link upload} for presigned mode only: the endpoint presigns every request (one PUT, or each
 * part of a multipart upload, plus Complete and Abort through its `/parts`, `/complete` and
 * `/abort` routes). Pages that never use token mode import this entry (`updraft-s3/presigned`) and
 * ship no SigV4 code at all. Same options as `upload()`, but `strategy` and the token-mode-only
 * `objectHeaders` / `partHeaders`; `checksum` takes `'md5'` only (Content-MD5).
 *
 * @param file - The bytes: a `File` (its name and type go to the endpoint) or any `Blob`; or, with
 * the `filename` and `contentType` options, a `Uint8Array` (a Node `Buffer`), a
 * `ReadableStream<Uint8Array>` or an async iterable of `Uint8Array` (a Node stream), of a known
 * length (the `size` option) or not (see `uploadObject`).
 * @param options - Every one optional; see {@link UploadOptions}.
 * @returns The stored object, `{ url, bucket, key, etag }`, once storage has confirmed it.
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
    return prepareAndSend(file, run, async ({ reply, contentType }, body) =>
      confirmUpload(await sendPresigned(body, reply as PresignedReply, contentType, run), reply, run),
      { presigned: presignedFields },
    )
  }) as Promise<UploadResult<ServerDataOf<Handler>>>
}

