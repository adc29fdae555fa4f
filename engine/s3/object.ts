import type { UploadResult } from '../../protocol/wire.ts'
import { type Bytes, isBytes, sizeOf } from '../core/body.ts'
import type { HttpResponse } from '../core/http.ts'
import { lazily } from '../core/lazy.ts'
import type { UploadRun } from '../core/run.ts'
import type { PartStream } from '../core/stream-body.ts'
import { putSingle } from './put.ts'
import { createSigner } from './sign.ts'
import type { CreatedUpload, ObjectTarget } from './target.ts'

/** `uploadObject` inside an upload that is already running (token mode), perhaps on an upload the endpoint `created`. */
export async function putObject(file: Bytes | PartStream, target: ObjectTarget, run: UploadRun, created?: CreatedUpload): Promise<UploadResult> {
  const { options, hooks: { journal } } = run
  const bytes = isBytes(file) && file
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

  // A stream is longer than one part; a resumed upload (a record's part size) is multipart.
  if (bytes && sizeOf(bytes) <= (journal?.partSize ?? options.partSize) && !created) {
    return putSingle(bytes, async (refused) => sign('PUT', '', { ...objectHeaders, ...(await checksums?.headers(0, bytes)) }, refused), result, run)
  }

  const { putParts } = await loadMultipart()
  return putParts(file, target, run, sign, objectHeaders, checksums, result, created)
}

/** The multipart machinery (the part loop, and its S3 steps), a chunk of its own: a page whose files all fit one PUT never loads it. */
export const loadMultipart = lazily(() => import('./multipart.ts'))
