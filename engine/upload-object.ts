import type { UploadResult } from '../protocol/wire.ts'
import { type UploadBody, withBody } from './core/body.ts'
import { warnUnknownOptions } from './core/option-names.ts'
import { runUpload } from './core/run.ts'
import { abortLostCreates } from './s3/lost-creates.ts'
import { putObject, withStoredETag } from './s3/object.ts'
import type { ObjectTarget } from './s3/target.ts'

export type { ChecksumRun, ChecksumTarget, ObjectExtras, ObjectTarget } from './s3/target.ts'

/**
 * Uploads `file` to one object with credentials the caller already holds: no upload API involved
 * (server side, a worker, a script, tests; `upload()` calls it in token mode). One PUT for a body
 * of up to `partSize` bytes, else a parallel multipart upload, with the same retries, abort and
 * cleanup as {@link upload}.
 *
 * @param file - The bytes: any `Blob` (in Node, `fs.openAsBlob(path)` gives one for a file), a
 * `Uint8Array` or Node `Buffer` (sent as views, never copied), or a stream of byte chunks (a
 * `ReadableStream<Uint8Array>`, a Node stream or any async iterable of `Uint8Array`), of a known
 * length (the `size` option) or not. A stream that ends within one part goes as one PUT; a
 * longer one is read a part at a time as slots free up, holding about `partConcurrency + 1`
 * parts in memory. Parts of a stream of unknown length are `partSize` bytes, so it may be at
 * most 10 000 × `partSize` long.
 * @param target - Where and with what credentials, plus any {@link TransferOptions}.
 * @returns The stored object, `{ url, bucket, key, etag }`, once storage has confirmed it.
 * @throws {@link S3Error} storage refused a request (`code`: `AccessDenied`, `NoSuchBucket`,
 * `InvalidAccessKeyId`, …), or still failed after `retry.limit` retries.
 * @throws {@link NetworkError} a request got no reply (offline, a CORS refusal, a stall of
 * `stallTimeout`) on every attempt.
 * @throws {@link UploadAbortedError} (`name` `'AbortError'`) `signal` aborted before storage
 * committed the object; cleanup goes on in the background (`onCleanup`).
 * @throws {@link BodyError} a stream body failed while it was read, or broke its `size`.
 * @throws {@link UploadError} a part's ETag was unreadable (the bucket's CORS lacks
 * `ExposeHeaders: ETag`), or CreateMultipartUpload answered without an upload id, or (with
 * `checksum`) storage's reply contradicts the checksum sent: the message starts `Checksum mismatch`.
 * @throws `RangeError`, `TypeError` an invalid option or target (a `partSize` under 5 MiB, a
 * bucket name with `/`, a key with a `..` segment): a bug in the calling code.
 *
 * Every error arrives as the promise's rejection, never thrown synchronously.
 * @example
 * ```ts
 * import { uploadObject } from 'updraft-s3'
 *
 * const { etag } = await uploadObject(blob, {
 *   bucket: 'uploads',
 *   key: 'photos/cat.jpg',
 *   region: 'us-east-1',
 *   endpoint: 'http://127.0.0.1:9000', // any S3-compatible store; leave out for AWS
 *   forcePathStyle: true,
 *   credentials: { accessKeyId, secretAccessKey, sessionToken },
 *   contentType: 'image/jpeg',
 * })
 *
 * // A zip made on the fly, of a length known only at its end:
 * await uploadObject(zipStream, { ...target, key: 'backup.zip', contentType: 'application/zip' }) // a Node Readable
 * ```
 */
export function uploadObject(file: UploadBody, target: ObjectTarget): Promise<UploadResult> {
  // Development builds name an option uploadObject() does not know; production bundles drop this (core/option-names.ts).
  try {
    if (process.env.NODE_ENV !== 'production') warnUnknownOptions('uploadObject', target)
  } catch {}
  return runUpload(target, (run) => {
    // With the caller's own credentials, which may list the bucket's uploads: a lost Create reply's stray is found and aborted here.
    run.hooks.lostCreates = (keep, callMs) => abortLostCreates(run, target, keep, callMs)
    return withBody(file, run.options, async (body) => withStoredETag(await putObject(body, target, run), run))
  })
}
