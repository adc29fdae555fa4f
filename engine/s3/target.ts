import type { ObjectLocation } from '../../protocol/object-url.ts'
import type { UploadResult } from '../../protocol/wire.ts'
import type { HttpResponse } from '../core/http.ts'
import type { TransferOptions } from '../core/options.ts'
import type { CredentialSource, Credentials, ResolveEndpoint } from './sign.ts'

// What one object's upload is given: where, with what credentials and opt-ins. Types only, apart
// from the code that uses them, so the part loop's lazy chunk and the opt-ins name them freely.

/** Where {@link uploadObject} writes, with what credentials, and how (every {@link TransferOptions}). */
export interface ObjectTarget extends ObjectLocation, TransferOptions {
  /** Fixed credentials, or a `CredentialSource` that renews them (token mode refreshes from the upload API). */
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
   * Token mode asks the upload API to. @default `uploadObject` lists the key's uploads with the
   * target's credentials and aborts those started within the call (`onCleanup` hears when it cannot)
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
 * One object's requests as this side signs them (token mode, `uploadObject`), with the run's
 * signer (`run.sign`): made by `putObject` (s3/object.ts), read by the single PUT and the part loop.
 */
export interface SignedObject {
  target: ObjectTarget
  /** PutObject's and CreateMultipartUpload's headers: the target's, its content-type and cache-control. */
  headers: Record<string, string>
  checksums?: ChecksumRun
  /** The result, once storage has stored the object (`reply`: the PUT's, or Complete's) and its checksum is checked. */
  stored(etag: string, reply: HttpResponse): Promise<UploadResult>
}

/** A multipart upload the upload API created, and ends (token mode's `createMultipart`). */
export interface CreatedUpload {
  uploadId: string
  complete(etags: string[]): Promise<UploadResult>
}
