import { S3Client } from '@aws-sdk/client-s3'
import { Upload } from '@aws-sdk/lib-storage'
import type { UploadTarget } from '../lib/child.ts'

/** `@aws-sdk/lib-storage` as every benchmark runs it, in Node and in the page alike. */
export function libStorageUploader(target: UploadTarget, partSize: number, queueSize: number) {
  const client = new S3Client({
    region: target.region,
    endpoint: target.endpoint,
    forcePathStyle: true,
    credentials: target.credentials,
    // As the project's own SDK clients: no CRC32 of every part (Updraft computes none either),
    // and RGW refuses the SDK's default streamed checksums (ARCHITECTURE.md).
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  })
  return async (body: Blob): Promise<void> => {
    await new Upload({
      client,
      params: { Bucket: target.bucket, Key: target.key, Body: body },
      partSize,
      queueSize,
    }).done()
  }
}
