import { planParts } from '../../protocol/parts.ts'
import type { UploadResult } from '../../protocol/wire.ts'
import { escapeXml, xmlText } from '../../protocol/xml.ts'
import { type Bytes, isBytes, sizeOf, slice } from '../core/body.ts'
import { onAbort } from '../core/callback.ts'
import { missingETag, UploadAbortedError, UploadError } from '../core/errors.ts'
import type { HttpResponse } from '../core/http.ts'
import { trackProgress } from '../core/progress.ts'
import { inBackground, type UploadRun } from '../core/run.ts'
import type { PartStream } from '../core/stream-body.ts'
import { runPool } from '../transport/queue.ts'
import type { ChecksumRun, CreatedUpload, ObjectTarget } from './target.ts'
import { bodyRequest } from './put.ts'
import { send, type Signer } from './send.ts'
import type { Sign } from './sign.ts'

/** A multipart upload that storage has already created, and how to sign its steps. */
export interface MultipartUpload {
  uploadId: string
  /** Every part but the last is this long. */
  partSize: number
  /** Signs part `partNumber`, whose bytes are `body` (checksums hash them). */
  signPart(partNumber: number, body: Bytes, refused?: Parameters<Signer>[0]): ReturnType<Signer>
  /** CompleteMultipartUpload, with its retries; sent once every part is on storage. */
  complete(etags: string[]): Promise<UploadResult>
  /** AbortMultipartUpload, with its retries, until `deadline` aborts. */
  abort(deadline: AbortSignal): Promise<unknown>
}

/**
 * Parts in parallel, then Complete. A Blob or bytes are cut into views as parts are sent; a
 * stream is read a part at a time as slots free up (its length, when unknown, shows as a growing
 * progress total). On a failure or abort, AbortMultipartUpload runs in the background
 * (`run.cleanups`) while the upload rejects at once.
 */
export async function putMultipart(body: Bytes | PartStream, upload: MultipartUpload, run: UploadRun): Promise<UploadResult> {
  const { options, hooks: { journal } } = run
  const { partSize } = upload
  const bytes = isBytes(body) && body
  const progress = trackProgress(() => sizeOf(body) ?? (body as PartStream).received, options.onProgress)
  // One failed part cancels its siblings through this controller, as the caller's abort does.
  const controller = new AbortController()
  const { signal } = controller
  run.phase = 'transferring'
  const stop = onAbort(options.signal, () => controller.abort())
  const etags: string[] = []
  let n = 0
  let next: () => Promise<[number, Bytes] | undefined> | [number, Bytes] | undefined
  if (bytes) {
    const count = Math.ceil(sizeOf(bytes) / partSize)
    // Views clamp at the end: the last part is what is left.
    const part = (n: number) => slice(bytes, (n - 1) * partSize, n * partSize)
    // Resume: parts storage already holds count as sent and are not sent again.
    journal?.started(upload.uploadId, partSize, count)
    journal?.stored.forEach((etag, n) => {
      etags[n - 1] = etag
      progress.finished(n, sizeOf(part(n)))
    })
    next = () => {
      do n++
      while (journal?.stored.has(n))
      return n > count ? undefined : [n, part(n)]
    }
  } else {
    next = async () => {
      const part = await (body as PartStream).next(partSize)
      return part && [++n, part]
    }
  }

  const uploadPart = async (partNumber: number, part: Bytes, held?: AbortSignal) => {
    const response = await send(run, (refused) => upload.signPart(partNumber, part, refused), {
      body: part,
      signal,
      onSent: (sent) => progress.sent(partNumber, sent),
      held,
    })
    const etag = response.header('ETag')
    if (!etag) throw missingETag(partNumber)
    etags[partNumber - 1] = etag
    journal?.accepted(partNumber, etag)
    progress.finished(partNumber, sizeOf(part))
  }

  try {
    if (options.signal?.aborted) throw new UploadAbortedError()
    // A paused part leaves the shared queue (others may use its slot) and waits for resume; a
    // stream's part is kept meanwhile, to be sent again.
    await runPool(options.partConcurrency, next, ([n, part]) =>
      bodyRequest(run, signal, (held) => uploadPart(n, part, held), () => progress.sent(n, 0)),
    )
    // The commit point: from here an abort waits for Complete's outcome, which is the truth.
    run.phase = 'committing'
    const result = await upload.complete(etags)
    progress.done()
    return result
  } catch (error) {
    controller.abort()
    if (!options.leavePartsOnError) {
      // After every part request has closed: a part storage is still receiving could otherwise
      // land after the abort and leave the upload behind (S3 says to abort again then).
      inBackground(run, () => Promise.all(run.open).then(() => upload.abort(AbortSignal.timeout(options.cleanupTimeout))))
    }
    throw options.signal?.aborted ? new UploadAbortedError() : error
  } finally {
    stop()
  }
}

/**
 * An object in parts with credentials this side signs with, the S3 steps in order:
 * CreateMultipartUpload (unless resumed, or `created` by the endpoint), each UploadPart,
 * CompleteMultipartUpload (or the endpoint's /complete for one it created), and
 * AbortMultipartUpload after a failure.
 */
export async function putParts(
  file: Bytes | PartStream,
  target: ObjectTarget,
  run: UploadRun,
  sign: Sign,
  objectHeaders: Record<string, string>,
  checksums: ChecksumRun | undefined,
  result: (etag: string, reply: HttpResponse) => Promise<UploadResult>,
  created: CreatedUpload | undefined,
): Promise<UploadResult> {
  const { options, hooks: { journal } } = run
  // A stream's declared length raises the part size as needed; a resumed upload keeps its record's.
  const plan = planParts(sizeOf(file) ?? 0, journal?.partSize ?? options.partSize)
  let attempts = 0
  // Resume: the upload a record names is carried on, not created again.
  let uploadId = journal?.uploadId ?? created?.uploadId
  if (!uploadId) {
    try {
      const created = await send(run, (refused) => (attempts++, sign('POST', '?uploads', { ...objectHeaders, ...checksums?.create }, refused)), {
        signal: options.signal,
        linger: true,
      })
      uploadId = xmlText(created.body, 'UploadId')
      if (!uploadId) throw new UploadError('CreateMultipartUpload answered without an UploadId')
    } finally {
      const { abortOtherUploads } = target
      if (abortOtherUploads && (attempts > 1 || (attempts && !uploadId))) inBackground(run, () => abortOtherUploads(uploadId))
    }
  }
  const ofUpload = `uploadId=${encodeURIComponent(uploadId!)}`

  return putMultipart(
    file,
    {
      uploadId: uploadId!,
      partSize: plan.partSize,
      signPart: async (partNumber, body, refused) =>
        sign('PUT', `?partNumber=${partNumber}&${ofUpload}`, { ...target.partHeaders, ...(await checksums?.headers(partNumber, body)) }, refused),
      async complete(etags) {
        if (created) return created.complete(etags)
        const parts = await checksums?.complete(etags)
        const completed = await send(run, (refused) => sign('POST', `?${ofUpload}`, { 'content-type': 'application/xml' }, refused), {
          body: completeXml(etags, parts),
          signal: options.signal,
          endsUpload: true,
        })
        return result(xmlText(completed.body, 'ETag') ?? '', completed)
      },
      abort: (deadline) => send(run, (refused) => sign('DELETE', `?${ofUpload}`, undefined, refused), { signal: deadline, endsUpload: true }),
    },
    run,
  )
}

/** Body of CompleteMultipartUpload; `extra[i]` goes into part i + 1's element (its checksum). */
const completeXml = (etags: readonly string[], extra?: readonly string[]) =>
  `<CompleteMultipartUpload xmlns="http://s3.amazonaws.com/doc/2006-03-01/">${etags
    .map((etag, i) => `<Part><PartNumber>${i + 1}</PartNumber><ETag>${escapeXml(etag)}</ETag>${extra?.[i] ?? ''}</Part>`)
    .join('')}</CompleteMultipartUpload>`
