import { xmlText } from '../../../protocol/xml.ts'
import { UploadError } from '../../core/errors.ts'
import type { ChecksumRun, ChecksumTarget, ObjectExtras } from '../../s3/target.ts'
import { toBase64 } from '../md5.ts'
import { CHECKSUM_ALGORITHMS, type ChecksumAlgorithm, compositeChecksum, toHex } from './digest.ts'
import { hashBody } from './off-thread.ts'

// The contract between the engine and a checksum opt-in (the `checksum` field of an upload's options).
export type { ChecksumRun, ChecksumTarget } from '../../s3/target.ts'
export { type ChecksumAlgorithm, compositeChecksum } from './digest.ts'

/**
 * Per-part checksums, an opt-in of `uploadObject` and of `upload` (presigned mode: `'md5'` only):
 * every body (the single PUT, each part) carries its checksum, so storage refuses bytes damaged on the way
 * (`BadDigest`, which the engine retries: the part is sent again). Off the base bundle.
 *
 * - `'md5'`: `Content-MD5`, which every S3-compatible store verifies (AWS, R2, MinIO, Ceph RGW),
 *   also on a presigned URL that does not sign it.
 * - `'crc32'`, `'crc32c'`, `'sha256'`: `x-amz-checksum-{algorithm}` on each body,
 *   `x-amz-checksum-algorithm` on CreateMultipartUpload and each part's checksum in Complete, as
 *   AWS and R2 take them (S3 then keeps a composite checksum, `…-N`). Never
 *   `x-amz-sdk-checksum-algorithm`, which Backblaze B2 and OVH refuse. Ceph RGW 16.2 ignores them.
 *
 * When storage's reply contradicts what was sent (an echoed checksum, an MD5 ETag, the composite
 * checksum of Complete), the upload rejects with an `UploadError` whose message starts
 * `Checksum mismatch`. SSE-KMS objects on AWS have ETags that are not MD5s: use `crc32c` there.
 * From a page, the bucket's CORS `AllowedHeaders` must allow the headers sent.
 *
 * Each body of 64 KiB or more is hashed off the main thread: in a page by a Web Worker made from
 * this module's own code (a Blob URL: no worker file, no bundler setting), in Node by a
 * worker_threads worker; at most two, shared by all uploads, stopped after 2 s idle. Where none
 * can start (a CSP whose `worker-src` leaves out `blob:`, a runtime without workers) the body is
 * hashed on the calling thread, with the same result.
 *
 * Uploads carry no checksum unless given one: measured on a null sink (2 cores, 8 MiB parts,
 * queue 4), a checksum costs 0.45-0.65x of the upload's throughput in Chromium and 0.27-0.55x in
 * Node even off the main thread (MD5 the most, then the CRCs and SHA-256), TLS already catches
 * damage on the way, and the algorithm that works depends on the store (docs/opt-ins.md).
 *
 * @param algorithm - `'crc32'`, `'crc32c'`, `'sha256'` or `'md5'`.
 * @returns `{ checksum }` to spread into an {@link ObjectTarget} or `upload()`'s options.
 * @throws `TypeError` for any other algorithm name; the upload rejects with a `TypeError` in
 * presigned mode for an algorithm other than `'md5'`, before the upload API is asked.
 * @example
 * ```ts
 * import { upload, uploadObject } from 'updraft-s3'
 * import { checksum } from 'updraft-s3/checksums'
 *
 * await uploadObject(file, { ...target, ...checksum('md5') }) // Ceph RGW, MinIO: Content-MD5
 * await upload(file, { ...checksum('crc32c') }) // token mode, AWS or R2
 * await upload(file, { strategy: 'presigned', ...checksum('md5') })
 * ```
 */
export function checksum(algorithm: ChecksumAlgorithm): ObjectExtras {
  if (!CHECKSUM_ALGORITHMS.includes(algorithm)) {
    throw new TypeError(`updraft: checksum must be one of ${CHECKSUM_ALGORITHMS.join(', ')}, got ${String(algorithm)}`)
  }
  return { checksum: (target) => checksumRun(algorithm, target) }
}

const mismatch = (what: string, stored: string, sent: string) =>
  new UploadError(
    `Checksum mismatch: storage reports ${stored} for ${what}, the bytes sent give ${sent}; the data was damaged on the way, upload it again`,
  )

/** S3's ETag is the hex MD5 of a body sent in one piece (`…-N` for multipart), unless SSE-C or SSE-KMS encrypted it. */
const MD5_ETAG = /^"?([0-9a-f]{32}(-\d+)?)"?$/

function checksumRun(algorithm: ChecksumAlgorithm, target: ChecksumTarget): ChecksumRun {
  const md5 = algorithm === 'md5'
  // Content-MD5 is a standard header, which storage verifies on a presigned request the URL does not
  // sign; AWS refuses an x-amz-* header outside a presigned URL's signed headers.
  if (!md5 && target.strategy === 'presigned') {
    throw new TypeError(
      `updraft: presigned mode takes checksum('md5') only, got '${algorithm}': AWS refuses x-amz-checksum-* headers a presigned URL does not sign`,
    )
  }
  // S3 Express One Zone documents that directory buckets take no MD5-based checksums.
  if (md5 && target.bucket?.endsWith('--x-s3')) {
    throw new TypeError(
      `updraft: directory buckets (${target.bucket}) take no MD5 checksums: use checksum('crc32c') in token mode`,
    )
  }
  const name = `Checksum${algorithm.toUpperCase()}`
  const header = md5 ? 'content-md5' : `x-amz-checksum-${algorithm}`
  // SSE-C objects' ETags are not the MD5 of the bytes sent.
  const etagIsMd5 = md5 && !target.partHeaders?.['x-amz-server-side-encryption-customer-algorithm']
  const digests = new Map<number, Promise<Uint8Array>>()
  let parts: Uint8Array[] = []

  // Compared only in S3's own form: s3rver, for one, gives a multipart object a plain MD5 ETag.
  const checkETag = (etag: string, expected: string, what: string) => {
    const stored = MD5_ETAG.exec(etag)?.[1]
    if (etagIsMd5 && stored && stored.includes('-') === expected.includes('-') && stored !== expected) {
      throw mismatch(what, `ETag ${stored}`, expected)
    }
  }

  return {
    create: md5 ? undefined : { 'x-amz-checksum-algorithm': algorithm.toUpperCase() },
    async headers(partNumber, body) {
      let value = digests.get(partNumber)
      // Read and hashed once, on the first attempt: retries send the same bytes.
      if (!value) digests.set(partNumber, (value = hashBody(algorithm, body)))
      return { [header]: toBase64(await value) }
    },
    async complete(etags) {
      parts = await Promise.all(etags.map((_, i) => digests.get(i + 1)!))
      parts.forEach((part, i) => {
        checkETag(etags[i]!, toHex(part), `part ${i + 1}`)
      })
      return md5 ? undefined : parts.map((part) => `<${name}>${toBase64(part)}</${name}>`)
    },
    async stored(reply, etag) {
      const single = digests.get(0)
      if (md5)
        return checkETag(etag, single ? toHex(await single) : await compositeChecksum('md5', parts), 'the object')
      // AWS echoes the checksum: a header on PutObject (when CORS exposes it), Complete's XML.
      const echoed = single ? reply.header(header) : xmlText(reply.body, name)
      const expected = single ? toBase64(await single) : await compositeChecksum(algorithm, parts)
      if (echoed && echoed !== expected) throw mismatch('the object', `${algorithm} ${echoed}`, expected)
    },
  }
}
