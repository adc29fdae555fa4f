import { S3Client } from '@aws-sdk/client-s3'
import { Upload } from '@aws-sdk/lib-storage'
import { runPage } from './browser-page.ts'

void runPage(async (body, { target, partSize, queueSize }) => {
  const client = new S3Client({
    region: target.region,
    endpoint: target.endpoint,
    forcePathStyle: true,
    credentials: target.credentials,
    // The same settings as in Node: no per-part CRC32 (Updraft computes none).
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  })
  await new Upload({ client, params: { Bucket: target.bucket, Key: target.key, Body: body }, partSize, queueSize }).done()
})
