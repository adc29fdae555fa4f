import type { ObjectExtras } from '../s3/target.ts'
import { md5, toBase64 } from './md5.ts'

/**
 * SSE-C, an opt-in of `uploadObject`: storage encrypts the object with the caller's AES-256 key
 * and keeps only the key's MD5, so reading it back takes the same key.
 *
 * `key` is 32 raw bytes, or a string: the base64 of 32 bytes is used as is, any other string is
 * taken as UTF-8 and encoded (the AWS SDK's `SSECustomerKey` rule). Spread the result into the
 * target: `uploadObject(file, { ...target, ...sseCustomerKey(key) })`. From a page, the bucket's
 * CORS `AllowedHeaders` must allow the three `x-amz-server-side-encryption-customer-*` headers.
 *
 * @param key - 32 raw bytes, the base64 of 32 bytes, or a 32-byte UTF-8 string.
 * @returns `{ partHeaders }` to spread into an {@link ObjectTarget}. Not for `upload()`: its upload API's
 * `/complete` cannot check an object it cannot read without the key, and refuses it (docs/opt-ins.md).
 * @throws `TypeError` when the key is not 32 bytes; the message gives its length, never the key.
 * @example
 * ```ts
 * import { uploadObject } from 'updraft-s3'
 * import { sseCustomerKey } from 'updraft-s3/sse-c'
 *
 * const key = crypto.getRandomValues(new Uint8Array(32)) // keep it: reading the object back needs it
 * await uploadObject(file, { ...target, ...sseCustomerKey(key) })
 * ```
 */
export function sseCustomerKey(key: string | Uint8Array): ObjectExtras {
  const bytes = keyBytes(key)
  // On PutObject, CreateMultipartUpload and every UploadPart (S3 refuses parts without them);
  // not on Complete or Abort. aws4fetch signs them, as S3 requires of every x-amz-* header.
  return {
    partHeaders: {
      'x-amz-server-side-encryption-customer-algorithm': 'AES256',
      'x-amz-server-side-encryption-customer-key': toBase64(bytes),
      'x-amz-server-side-encryption-customer-key-MD5': toBase64(md5(bytes)),
    },
  }
}

/** Exactly the base64 of 32 bytes: 43 characters and one `=` of padding. */
const BASE64_KEY = /^[A-Za-z0-9+/]{43}=$/

function keyBytes(key: string | Uint8Array): Uint8Array {
  const bytes =
    typeof key !== 'string'
      ? new Uint8Array(key)
      : BASE64_KEY.test(key)
        ? Uint8Array.from(atob(key), (char) => char.charCodeAt(0))
        : new TextEncoder().encode(key)
  if (bytes.length !== 32) {
    // The length only: the key is a secret and must not reach logs through an error message.
    throw new TypeError(
      `updraft: sseCustomerKey must be a 256-bit AES key (32 bytes, a 32-byte string or base64 of 32 bytes), got ${bytes.length} bytes`,
    )
  }
  return bytes
}
