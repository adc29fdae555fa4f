import type { UploadResult } from '../../protocol/wire.ts'
import { type Bytes, isBytes, sizeOf, slice } from '../core/body.ts'
import type { PartStream } from '../core/stream-body.ts'
import { UploadAbortedError, missingETag } from '../core/errors.ts'
import { onAbort } from '../core/callback.ts'
import { inBackground, type UploadRun } from '../core/run.ts'
import { trackProgress } from '../core/progress.ts'
import { runPool } from '../transport/queue.ts'
import { send, type Signer } from './send.ts'
import type { HttpResponse } from '../transport/transport.ts'

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

/** One PutObject. */
export async function putSingle(
  file: Bytes,
  sign: Signer,
  result: (etag: string, reply: HttpResponse) => UploadResult | Promise<UploadResult>,
  run: UploadRun,
): Promise<UploadResult> {
  const { signal, onProgress } = run.options
  const size = sizeOf(file)
  const progress = trackProgress(() => size, onProgress)
  run.phase = 'transferring'
  const onSent = (bytes: number) => {
    // Its last byte has left (an empty body's at once): storage may be writing the object, which
    // an abort can no longer stop.
    if (bytes === size) run.phase = 'committing'
    progress.sent(1, bytes)
  }
  // A pause cancels the PUT (S3 cannot keep half an object): it is sent again whole on resume.
  const response = await bodyRequest(run, signal, (held) => send(run, sign, { body: file, signal, onSent, held }), () => progress.sent(1, 0))
  run.phase = 'committing'
  progress.done()
  return result(response.header('ETag') ?? '', response)
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
 * One body request (a single PUT, a part): in a slot of the shared `queue` when there is one, and
 * held by a pause (the `hold` hook) when the upload has a `pauseSignal`. `onHeld`: a pause
 * stopped it (its bytes in flight no longer count).
 */
function bodyRequest<T>(run: UploadRun, signal: AbortSignal | undefined, task: (held?: AbortSignal) => Promise<T>, onHeld: () => void): Promise<T> {
  const { queue } = run.options
  const queued = (held?: AbortSignal) => (queue ? queue.run(() => task(held), signal) : task(held))
  return run.hooks.hold ? run.hooks.hold(queued, signal, onHeld) : queued()
}
