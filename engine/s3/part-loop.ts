import type { UploadResult } from '../../protocol/wire.ts'
import { type Bytes, isBytes, sizeOf, slice } from '../core/body.ts'
import { onAbort } from '../core/callback.ts'
import { missingETag, type S3Error, UploadAbortedError } from '../core/errors.ts'
import { inBackground, startTransfer, type UploadRun } from '../core/run.ts'
import type { SignedRequest } from '../core/signing.ts'
import type { PartStream } from '../core/stream-body.ts'
import { runPool } from '../transport/queue.ts'
import { bodyRequest } from './put.ts'
import { type Signer, send } from './send.ts'

// The part loop both modes share: presigned mode's steps come from the upload API
// (modes/presigned-multipart.ts), token mode's and uploadObject's are signed here (multipart.ts).

/**
 * How one multipart upload's steps are signed and ended, in its mode: token mode and
 * `uploadObject` sign here ({@link putParts}), presigned mode asks the upload API
 * (modes/presigned-multipart.ts). The part list itself is the run's (`run.parts`).
 */
export interface PartSteps {
  /** Signs part `partNumber`, whose bytes are `body` (checksums hash them); see {@link Signer} for `refused`. */
  signPart(partNumber: number, body: Bytes, refused?: S3Error): Promise<SignedRequest>
  /** Ends the upload once every part is stored (`run.parts.etags`): CompleteMultipartUpload, or the upload API's `/complete`. */
  complete(): Promise<UploadResult>
  /** AbortMultipartUpload, with its retries, until `deadline` aborts. */
  abort(deadline: AbortSignal): Promise<unknown>
}

/**
 * Parts in parallel, then Complete, for the multipart upload `created` (its id and part size).
 * A Blob or bytes are cut into views as parts are sent; a stream is read a part at a time as
 * slots free up (its length, when unknown, shows as a growing progress total). On a failure or
 * abort, AbortMultipartUpload runs in the background (`run.cleanups`) while the upload rejects at once.
 */
export async function putMultipart(
  body: Bytes | PartStream,
  run: UploadRun,
  created: { uploadId: string; partSize: number },
  steps: PartSteps,
): Promise<UploadResult> {
  const {
    options,
    hooks: { journal },
  } = run
  const { uploadId, partSize } = created
  const etags: string[] = []
  run.parts = { uploadId, partSize, etags }
  const bytes = isBytes(body) && body
  const progress = startTransfer(run, () => sizeOf(body) ?? (body as PartStream).received)
  // One failed part cancels its siblings through this controller, as the caller's abort does.
  const controller = new AbortController()
  const { signal } = controller
  const stop = onAbort(options.signal, () => controller.abort())
  let n = 0
  let next: () => Promise<[number, Bytes] | undefined> | [number, Bytes] | undefined
  if (bytes) {
    const count = Math.ceil(sizeOf(bytes) / partSize)
    // Views clamp at the end: the last part is what is left.
    const part = (n: number) => slice(bytes, (n - 1) * partSize, n * partSize)
    // Resume: parts storage already holds count as sent and are not sent again.
    journal?.started(uploadId, partSize, count)
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
    // A stream's upload is recorded with no part count (its length is known only at its end).
    journal?.started(uploadId, partSize, undefined)
    next = async () => {
      const part = await (body as PartStream).next(partSize)
      return part && [++n, part]
    }
  }

  const uploadPart = async (partNumber: number, part: Bytes, held?: AbortSignal) => {
    const response = await send(run, (refused) => steps.signPart(partNumber, part, refused), {
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
      bodyRequest(
        run,
        signal,
        (held) => uploadPart(n, part, held),
        () => progress.sent(n, 0),
      ),
    )
    // The commit point: from here an abort waits for Complete's outcome, which is the truth.
    run.phase = 'committing'
    const result = await steps.complete()
    progress.done()
    return result
  } catch (error) {
    controller.abort()
    if (!options.leavePartsOnError) {
      // After every part request has closed: a part storage is still receiving could otherwise
      // land after the abort and leave the upload behind (S3 says to abort again then).
      inBackground(run, () =>
        Promise.all(run.open).then(() => steps.abort(AbortSignal.timeout(options.cleanupTimeout))),
      )
    }
    throw options.signal?.aborted ? new UploadAbortedError() : error
  } finally {
    stop()
  }
}
