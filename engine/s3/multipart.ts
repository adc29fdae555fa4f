import { planParts } from '../../protocol/parts.ts'
import type { UploadResult } from '../../protocol/wire.ts'
import { escapeXml, xmlText } from '../../protocol/xml.ts'
import { type Bytes, sizeOf } from '../core/body.ts'
import { UploadError } from '../core/errors.ts'
import { inBackground, type UploadRun } from '../core/run.ts'
import type { PartStream } from '../core/stream-body.ts'
import { putMultipart } from './part-loop.ts'
import { send } from './send.ts'
import type { CreatedUpload, SignedObject } from './target.ts'

// The S3 steps of one multipart upload signed with the run's credentials, in one module:
// CreateMultipartUpload (and cleaning up after its lost replies), each UploadPart, Complete, Abort.
// A chunk of its own (object.ts loads it): presigned pages, whose steps are the upload API's, never do.

/**
 * An object in parts signed with the run's credentials (`run.sign`), the S3 steps in order:
 * CreateMultipartUpload (unless resumed, or `created` by the upload API), each UploadPart,
 * CompleteMultipartUpload (or the upload API's /complete for one it created), and
 * AbortMultipartUpload after a failure.
 */
export async function putParts(
  file: Bytes | PartStream,
  object: SignedObject,
  run: UploadRun,
  created?: CreatedUpload,
): Promise<UploadResult> {
  const {
    options,
    hooks: { journal },
  } = run
  const { target, checksums } = object
  const sign = run.sign!
  // A stream's declared length raises the part size as needed; a resumed upload keeps its record's.
  const { partSize } = planParts(sizeOf(file) ?? 0, journal?.partSize ?? options.partSize)
  // Resume: the upload a record names is carried on, not created again.
  const uploadId = journal?.uploadId ?? created?.uploadId ?? (await createUpload(object, run))
  const ofUpload = `uploadId=${encodeURIComponent(uploadId)}`

  return putMultipart(
    file,
    run,
    { uploadId, partSize },
    {
      signPart: async (partNumber, body, refused) =>
        sign(
          'PUT',
          `?partNumber=${partNumber}&${ofUpload}`,
          { ...target.partHeaders, ...(await checksums?.headers(partNumber, body)) },
          refused,
        ),
      async complete() {
        const { etags } = run.parts!
        if (created) return created.complete(etags)
        const parts = await checksums?.complete(etags)
        const completed = await send(
          run,
          (refused) => sign('POST', `?${ofUpload}`, { 'content-type': 'application/xml' }, refused),
          {
            body: completeXml(etags, parts),
            signal: options.signal,
            endsUpload: true,
          },
        )
        return object.stored(xmlText(completed.body, 'ETag') ?? '', completed)
      },
      abort: (deadline) =>
        send(run, (refused) => sign('DELETE', `?${ofUpload}`, undefined, refused), {
          signal: deadline,
          endsUpload: true,
        }),
    },
  )
}

/**
 * CreateMultipartUpload, with its retries. An attempt whose reply was lost may have created an
 * upload this side never heard of: after a retry (or a failure) such uploads are aborted in the
 * background, by the target's `abortOtherUploads` (token mode asks the upload API) or else by the
 * run's `lostCreates` hook (`uploadObject` lists and aborts them itself: s3/lost-creates.ts).
 */
async function createUpload({ target, headers, checksums }: SignedObject, run: UploadRun): Promise<string> {
  const startedAt = Date.now()
  let attempts = 0
  let uploadId: string | undefined
  try {
    const created = await send(
      run,
      (refused) => (attempts++, run.sign!('POST', '?uploads', { ...headers, ...checksums?.create }, refused)),
      {
        signal: run.options.signal,
        linger: true,
      },
    )
    uploadId = xmlText(created.body, 'UploadId')
    if (!uploadId) throw new UploadError('CreateMultipartUpload answered without an UploadId')
    return uploadId
  } finally {
    if (attempts > 1 || (attempts && !uploadId)) {
      const callMs = Date.now() - startedAt
      const { abortOtherUploads } = target
      inBackground(run, async () =>
        abortOtherUploads ? abortOtherUploads(uploadId) : run.hooks.lostCreates?.(uploadId, callMs),
      )
    }
  }
}

/** Body of CompleteMultipartUpload; `extra[i]` goes into part i + 1's element (its checksum). */
const completeXml = (etags: readonly string[], extra?: readonly string[]) =>
  `<CompleteMultipartUpload xmlns="http://s3.amazonaws.com/doc/2006-03-01/">${etags
    .map(
      (etag, i) => `<Part><PartNumber>${i + 1}</PartNumber><ETag>${escapeXml(etag)}</ETag>${extra?.[i] ?? ''}</Part>`,
    )
    .join('')}</CompleteMultipartUpload>`
