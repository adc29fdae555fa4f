import type { UploadResult } from '../../protocol/wire.ts'
import { type Bytes, isBytes, sizeOf } from '../core/body.ts'
import { lazily } from '../core/lazy.ts'
import type { UploadRun } from '../core/run.ts'
import type { PartStream } from '../core/stream-body.ts'
import { putSingle } from './put.ts'
import { send } from './send.ts'
import { createSigner } from './sign.ts'
import type { CreatedUpload, ObjectTarget, SignedObject } from './target.ts'

/**
 * `uploadObject` inside an upload that is already running (token mode), perhaps on an upload the
 * upload API `created`: the run signs with the target's credentials from here on (`run.sign`).
 */
export async function putObject(
  file: Bytes | PartStream,
  target: ObjectTarget,
  run: UploadRun,
  created?: CreatedUpload,
): Promise<UploadResult> {
  const {
    options,
    hooks: { journal },
  } = run
  const bytes = isBytes(file) && file
  const sign = (run.sign = createSigner(target.credentials, target))
  const checksums = target.checksum?.(target)
  const object: SignedObject = {
    target,
    // Empty values (a Blob with no type, no cache-control) are left out rather than sent blank.
    headers: Object.fromEntries(
      Object.entries({
        ...target.objectHeaders,
        ...target.partHeaders,
        'content-type': target.contentType || (file as Blob).type,
        'cache-control': target.cacheControl,
      }).filter(([, value]) => value),
    ) as Record<string, string>,
    checksums,
    async stored(etag, reply) {
      if (etag) await checksums?.stored(reply, etag)
      else run.checkETag = async (etag) => checksums?.stored(reply, etag)
      return { url: sign.url(), bucket: target.bucket, key: target.key, etag }
    },
  }

  // A stream is longer than one part; a resumed upload (a record's part size) is multipart.
  if (bytes && sizeOf(bytes) <= (journal?.partSize ?? options.partSize) && !created) {
    return putSingle(
      bytes,
      async (refused) => sign('PUT', '', { ...object.headers, ...(await checksums?.headers(0, bytes)) }, refused),
      object.stored,
      run,
    )
  }

  const { putParts } = await loadMultipart()
  return putParts(file, object, run, created)
}

/**
 * `result` with the stored object's ETag, where storage's reply that stored it had none (RGW's
 * Complete): a HEAD with the run's credentials, and the checksum's ETag check on it. Credentials
 * that may not read the object leave `etag` empty, and that check unrun.
 */
export async function withStoredETag(result: UploadResult, run: UploadRun): Promise<UploadResult> {
  if (result.etag) return result
  const head = await send(run, (refused) => run.sign!('HEAD', '', undefined, refused), {
    signal: run.options.signal,
  }).catch(() => undefined)
  const etag = head?.header('ETag')
  if (!etag) return result
  await run.checkETag?.(etag)
  return { ...result, etag }
}

/** The multipart machinery (the part loop, and its S3 steps), a chunk of its own: a page whose files all fit one PUT never loads it. */
export const loadMultipart = lazily(() => import('./multipart.ts'))
