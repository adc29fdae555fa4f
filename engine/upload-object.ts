import type { ObjectLocation } from '../protocol/object-url.ts'
import { planParts } from '../protocol/parts.ts'
import type { UploadResult } from '../protocol/wire.ts'
import { type Bytes, isBytes, sizeOf, type UploadBody, withBody } from './flow/body.ts'
import type { PartStream } from './flow/stream-body.ts'
import { UploadError } from './errors.ts'
import type { TransferOptions } from './options.ts'
import { putMultipart, putSingle } from './flow/put.ts'
import { xmlText } from '../protocol/xml.ts'
import { completeXml } from './s3/xml.ts'
import { send } from './http/send.ts'
import { inBackground, runUpload, type UploadRun } from './run.ts'
import { createSigner, type CredentialSource, type Credentials, type ResolveEndpoint } from './s3/sign.ts'
import type { HttpResponse } from './http/transport.ts'
import { warnUnknownOptions } from './option-names.ts'

/** Where {@link uploadObject} writes, with what credentials, and how (every {@link TransferOptions}). */
export interface ObjectTarget extends ObjectLocation, TransferOptions {
  /** Fixed credentials, or a `CredentialSource` that renews them (token mode refreshes from the endpoint). */
  credentials: Credentials | CredentialSource
  /** The object's Content-Type. @default the Blob's own type (none when it has none, or for bytes and streams) */
  contentType?: string
  /** The object's Cache-Control. @default none */
  cacheControl?: string
  /**
   * Extra headers, signed, for PutObject and CreateMultipartUpload only: `x-amz-tagging` (see
   * `taggingHeaders`), `x-amz-meta-*`, `x-amz-storage-class`… Lower-case names; `content-type`
   * and `cache-control` come from the two options above.
   */
  objectHeaders?: Record<string, string>
  /**
   * As `objectHeaders`, and on every UploadPart too (never Complete or Abort): the SSE-C headers
   * S3 wants on each request that carries the object's bytes (see `sseCustomerKey`).
   */
  partHeaders?: Record<string, string>
  /**
   * Called in the background when CreateMultipartUpload did not succeed at its first attempt: an
   * attempt whose reply was lost may have created an upload this side never heard of. It should
   * abort every multipart upload on this key but `keep` (the one in use; undefined when none).
   * Token mode asks the endpoint to; with your own credentials, list and abort them yourself.
   */
  abortOtherUploads?: (keep: string | undefined) => Promise<unknown>
  /**
   * Where the object's requests go and how they are signed: `awsEndpoints()` from
   * `updraft-s3/aws-endpoints` (S3's endpoint rules: FIPS, dual-stack, acceleration, access-point
   * ARNs, and following a bucket to its region). @default the engine's own rule: virtual-hosted
   * on AWS, path-style for dotted buckets, IP addresses and `forcePathStyle`
   */
  resolveEndpoint?: ResolveEndpoint
  /**
   * Per-part checksums, `checksum('crc32c')` from `updraft-s3/checksums`: each body carries its
   * checksum (Content-MD5 or `x-amz-checksum-*`), so storage refuses bytes damaged on the way.
   * @default none: a checksum costs 0.27-0.65x of a fast upload's throughput even hashed off the
   * main thread, and the algorithm a store checks differs (`checksum()` gives the figures)
   */
  checksum?: (target: ChecksumTarget) => ChecksumRun
}

/**
 * What a checksum opt-in is told of the upload: SSE-C changes what an ETag is; presigned URLs sign
 * headers; a directory bucket takes no MD5 (`bucket`: known where this side signs).
 */
export type ChecksumTarget = Pick<ObjectTarget, 'partHeaders'> & { strategy?: 'token' | 'presigned'; bucket?: string }

/**
 * One upload's checksums, as an opt-in keeps them; the engine only asks for headers and hands
 * over storage's replies. Methods throw an `UploadError` starting `Checksum mismatch` when
 * storage contradicts the bytes sent.
 */
export interface ChecksumRun {
  /** Headers of CreateMultipartUpload (the algorithm its parts carry). */
  create?: Record<string, string>
  /** The headers carrying the checksum of `body`, part `partNumber` (0: a single PUT); each body is hashed once, whatever its retries. */
  headers(partNumber: number, body: Blob | Uint8Array): Promise<Record<string, string>>
  /** Before Complete: checks the parts' ETags; resolves with each part's extra Complete XML. */
  complete(etags: string[]): Promise<string[] | undefined>
  /** Checks the reply that stored the object (the single PUT's, Complete's) and its ETag. */
  stored(reply: HttpResponse, etag: string): Promise<void>
}

/**
 * What an opt-in module adds to an `ObjectTarget`. Each opt-in fills one field only, so several
 * spread into one target without overwriting each other:
 * `{ ...target, ...sseCustomerKey(key), ...taggingHeaders(tags) }`.
 */
export type ObjectExtras = Pick<ObjectTarget, 'objectHeaders' | 'partHeaders' | 'resolveEndpoint' | 'checksum'>

/**
 * Uploads `file` to one object with credentials the caller already holds: no endpoint involved
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
  // Development builds name an option uploadObject() does not know; production bundles drop this (option-names.ts).
  try {
    if (process.env.NODE_ENV !== 'production') warnUnknownOptions('uploadObject', target)
  } catch {}
  return runUpload(target, (run) => withBody(file, run.options, (body) => putObject(body, target, run)))
}

/** A multipart upload the endpoint created, and ends (token mode's `createMultipart`). */
export interface CreatedUpload {
  uploadId: string
  complete(etags: string[]): Promise<UploadResult>
}

/** `uploadObject` inside an upload that is already running (token mode), perhaps on an upload the endpoint `created`. */
export async function putObject(file: Bytes | PartStream, target: ObjectTarget, run: UploadRun, created?: CreatedUpload): Promise<UploadResult> {
  const { options, hooks: { journal } } = run
  const bytes = isBytes(file) && file
  // A stream is longer than one part: its own length when declared raises the part size as needed.
  // A resumed upload keeps its record's part size.
  const plan = planParts(sizeOf(file) ?? 0, journal?.partSize ?? options.partSize)
  const sign = createSigner(target.credentials, target)
  // Empty values (a Blob with no type, no cache-control) are left out rather than sent blank.
  const objectHeaders = Object.fromEntries(
    Object.entries({
      ...target.objectHeaders,
      ...target.partHeaders,
      'content-type': target.contentType || (file as Blob).type,
      'cache-control': target.cacheControl,
    }).filter(([, value]) => value),
  ) as Record<string, string>
  const checksums = target.checksum?.(target)
  const result = async (etag: string, reply: HttpResponse): Promise<UploadResult> => {
    await checksums?.stored(reply, etag)
    return { url: sign.url(), bucket: target.bucket, key: target.key, etag }
  }

  if (bytes && plan.count < 2 && !created) {
    return putSingle(bytes, async (refused) => sign('PUT', '', { ...objectHeaders, ...(await checksums?.headers(0, bytes)) }, refused), result, run)
  }

  let attempts = 0
  // Resume: the upload a record names is carried on, not created again.
  let uploadId = journal?.uploadId ?? created?.uploadId
  if (!uploadId) {
    try {
      const created = await send(run, (refused) => (attempts++, sign('POST', '?uploads', { ...objectHeaders, ...checksums?.create }, refused)), {
        signal: options.signal,
        linger: true,
      })
      uploadId = xmlText(created.body, 'UploadId')
      if (!uploadId) throw new UploadError('CreateMultipartUpload answered without an UploadId')
    } finally {
      const { abortOtherUploads } = target
      if (abortOtherUploads && (attempts > 1 || (attempts && !uploadId))) inBackground(run, () => abortOtherUploads(uploadId))
    }
  }
  const ofUpload = `uploadId=${encodeURIComponent(uploadId!)}`

  return putMultipart(
    file,
    {
      uploadId: uploadId!,
      partSize: plan.partSize,
      signPart: async (partNumber, body, refused) =>
        sign('PUT', `?partNumber=${partNumber}&${ofUpload}`, { ...target.partHeaders, ...(await checksums?.headers(partNumber, body)) }, refused),
      async complete(etags) {
        if (created) return created.complete(etags)
        const parts = await checksums?.complete(etags)
        const completed = await send(run, (refused) => sign('POST', `?${ofUpload}`, { 'content-type': 'application/xml' }, refused), {
          body: completeXml(etags, parts),
          signal: options.signal,
          endsUpload: true,
        })
        return result(xmlText(completed.body, 'ETag') ?? '', completed)
      },
      abort: (deadline) => send(run, (refused) => sign('DELETE', `?${ofUpload}`, undefined, refused), { signal: deadline, endsUpload: true }),
    },
    run,
  )
}
