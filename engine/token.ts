import type { MetadataOf, ServerDataOf, TokenReply, UploadResult } from '../protocol/wire.ts'
import { confirmUpload } from './modes/confirm.ts'
import { sendWithToken, tokenFields } from './modes/token.ts'
import { prepareAndSend, type UploadOptions } from './modes/request.ts'
import { runUpload } from './core/run.ts'
import { warnUnknownOptions } from './core/option-names.ts'
import type { UploadBody } from './core/body.ts'

/**
 * {@link upload} for token mode only: the endpoint issues STS credentials allowed to write one
 * key, and the page signs its own requests to storage (SigV4), refreshing the credentials from
 * the endpoint before they expire. Pages that never use presigned mode import this entry
 * (`updraft-s3/token`) and ship none of its code. Same options as `upload()`, but `strategy`.
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
 * `ExposeHeaders: ETag`).
 * @throws `RangeError`, `TypeError` an invalid option (`partConcurrency: 0`, `retry: { limit: 1.5 }`,
 * …): a bug in the calling code, deliberately not an `UploadError`.
 *
 * Every error arrives as the promise's rejection, never thrown synchronously.
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
    return prepareAndSend(file, run, async ({ reply, contentType }, body) =>
      confirmUpload(await sendWithToken(body, reply as TokenReply, contentType, run), reply, run),
      { token: tokenFields },
    )
  }) as Promise<UploadResult<ServerDataOf<Handler>>>
}

