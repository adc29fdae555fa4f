import { ListMultipartUploadsCommand, type S3Client } from '@aws-sdk/client-s3'
import type { Logger } from './config.ts'
import { errorLogFields } from './error-log-fields.ts'

/**
 * Storage's `Initiated` times may be cut to the second (S3's XML has milliseconds, not every store
 * fills them): the window reaches this much further back.
 */
const INITIATED_RESOLUTION_MS = 1000

/**
 * After a CreateMultipartUpload the SDK had to retry (`attempts > 1`): an earlier attempt may have
 * created an upload whose reply was lost, which nobody knows of and only the sweep or a lifecycle
 * rule would ever end. Those are found on the same key, started within the call — judged on
 * storage's own clock, from the upload just made back by the call's duration, so no clock
 * difference between this server and storage widens it — and aborted. An upload on the same key
 * started before the call (another tab's, with a custom key) is left alone. Where the server's key
 * cannot list (s3rver; no s3:ListBucketMultipartUploads) the log says so and the upload goes on:
 * the sweep's period bounds what is left (docs/operations.md).
 * @returns how many were aborted.
 */
export async function abortLostCreates(
  s3: S3Client,
  { bucket, key, keep, callMs }: { bucket: string; key: string; keep: string; callMs: number },
  abort: (uploadId: string) => Promise<void>,
  logger: Logger,
): Promise<number> {
  try {
    const listed = await s3.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: key }))
    const onKey = (listed.Uploads ?? []).filter((upload) => upload.Key === key && upload.UploadId && upload.Initiated)
    const made = onKey.find((upload) => upload.UploadId === keep)?.Initiated?.getTime()
    if (made === undefined) return 0
    const strays = onKey.filter(({ UploadId, Initiated }) => {
      const at = Initiated!.getTime()
      return UploadId !== keep && at <= made && at >= made - callMs - INITIATED_RESOLUTION_MS
    })
    for (const { UploadId } of strays) await abort(UploadId!)
    return strays.length
  } catch (error) {
    logger.warn?.(
      { err: errorLogFields(error), key },
      'updraft: CreateMultipartUpload was retried, and the uploads an earlier attempt may have left could not be listed or aborted ' +
        '(the server key needs s3:ListBucketMultipartUploads): the sweep or a lifecycle rule ends them',
    )
    return 0
  }
}
