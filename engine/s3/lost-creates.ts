import { encodeKey } from '../../protocol/object-url.ts'
import { xmlText } from '../../protocol/xml.ts'
import { UploadError } from '../core/errors.ts'
import type { UploadRun } from '../core/run.ts'
import { serverNow } from './clock.ts'
import { send } from './send.ts'
import { createSigner } from './sign.ts'
import type { ObjectTarget } from './target.ts'

/**
 * Storage's `Initiated` times may be cut to the second (not every store fills S3's milliseconds):
 * the window reaches this much further on each side.
 */
const INITIATED_RESOLUTION_MS = 1000

/**
 * The uploads a lost Create reply left on the key, aborted with the run's own credentials (what
 * the upload API does for the Creates it makes, server/lost-creates.ts): ListMultipartUploads on the
 * key, then AbortMultipartUpload for each started within the Create call but `keep` — judged on
 * storage's clock, back from `keep`'s own start by the call's duration (or, when no Create
 * succeeded, from storage's time now as the engine knows it), so an upload on the same key that
 * another writer started before the call is left alone. Credentials that may not list (a token's
 * policy, most often) reject with the reason, which `onCleanup` hears: a stray may remain.
 */
export async function abortLostCreates(
  run: UploadRun,
  target: ObjectTarget,
  keep: string | undefined,
  callMs: number,
): Promise<void> {
  const deadline = AbortSignal.timeout(run.options.cleanupTimeout)
  const objectUrl = run.sign!.url()
  // The bucket's URL is the object's without its key, signed as the object's is (a custom
  // `resolveEndpoint` may sign elsewhere: its targets pass `abortOtherUploads`).
  const bucketSign =
    !target.resolveEndpoint &&
    createSigner(target.credentials, {
      ...target,
      resolveEndpoint: (_, refused) =>
        refused
          ? undefined
          : {
              url: objectUrl.slice(0, -encodeKey(target.key).length),
              signingRegion: target.region,
              signingService: 's3',
            },
    })
  try {
    if (!bucketSign) throw new UploadError('a custom resolveEndpoint signs the bucket elsewhere')
    const listed = await send(
      run,
      (refused) => bucketSign('GET', `?uploads&prefix=${encodeURIComponent(target.key)}`, undefined, refused),
      { signal: deadline },
    )
    const onKey = listed.body
      .split('<Upload>')
      .slice(1)
      .map((upload) => ({
        key: xmlText(upload, 'Key'),
        uploadId: xmlText(upload, 'UploadId')!,
        at: Date.parse(xmlText(upload, 'Initiated')!),
      }))
      .filter((upload) => upload.key === target.key && upload.uploadId)
    const now = serverNow()
    const made = keep ? onKey.find((upload) => upload.uploadId === keep)?.at : now
    const end = keep ? made : now + INITIATED_RESOLUTION_MS
    const strays =
      made === undefined
        ? []
        : onKey.filter(
            ({ uploadId, at }) => uploadId !== keep && at <= end! && at >= made - callMs - INITIATED_RESOLUTION_MS,
          )
    for (const { uploadId } of strays) {
      await send(
        run,
        (refused) => run.sign!('DELETE', `?uploadId=${encodeURIComponent(uploadId)}`, undefined, refused),
        { signal: deadline, endsUpload: true },
      )
    }
  } catch (error) {
    throw new UploadError(
      `CreateMultipartUpload was retried, and the uploads an earlier attempt may have left on ${target.key} could not be listed or aborted ` +
        `(${(error as Error).message}): give credentials that may list the bucket's multipart uploads, or pass abortOtherUploads; a lifecycle rule ends what is left`,
    )
  }
}
