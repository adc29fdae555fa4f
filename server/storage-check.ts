import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3'
import { isDirectoryBucket } from '../protocol/directory-session.ts'
import type { ResolvedConfig } from './config.ts'

/** Answers that prove storage took the server's signature and knows the bucket: the probe object is missing, or the key may not read it. */
const SIGNED = ['NoSuchKey', 'NotFound', 'AccessDenied']

/**
 * Whether storage takes the server's key and knows its bucket, asked once before the first
 * presigned single PUT is signed: that reply is made without a word to storage, so a wrong
 * `S3_UPLOAD_SECRET` or bucket name otherwise shows only as the page's own PUT refused
 * (SignatureDoesNotMatch), while a multipart upload's CreateMultipartUpload fails on the server:
 * two files, two different errors for one setting. (Token mode needs no check: STS checks the
 * server's signature, and a wrong bucket is the page's own final NoSuchBucket.) One ranged GET of a key under `keyPrefix` that
 * no upload uses (a missing object answers NoSuchKey, or AccessDenied to a key without
 * s3:ListBucket: both prove the signature); what it throws is the server's to classify
 * (server/config-faults.ts). Until it passes, each such request asks again (concurrent ones
 * share one request); once it has, never again. A directory bucket is not asked: its URLs are
 * signed with CreateSession sessions the server asks for itself, which fail on the server.
 */
export function createStorageCheck(config: ResolvedConfig, s3: S3Client): () => Promise<void> {
  let passed = isDirectoryBucket(config.bucket)
  let checking: Promise<void> | undefined
  const check = async () => {
    try {
      const got = await s3.send(
        new GetObjectCommand({
          Bucket: config.bucket,
          Key: `${config.keyPrefix}updraft-settings-check`,
          Range: 'bytes=0-0',
        }),
      )
      // Someone stored that key: its one byte is read, so the connection goes back to the pool.
      await got.Body?.transformToByteArray()
    } catch (error) {
      if (!SIGNED.includes((error as Error).name)) throw error
    }
    passed = true
  }
  return async () => {
    if (passed) return
    checking ??= check().finally(() => {
      checking = undefined
    })
    await checking
  }
}
