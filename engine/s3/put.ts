import type { UploadResult } from '../../protocol/wire.ts'
import { type Bytes, sizeOf } from '../core/body.ts'
import type { HttpResponse } from '../core/http.ts'
import { startTransfer, type UploadRun } from '../core/run.ts'
import type { FormBody } from './form.ts'
import { type Signer, send } from './send.ts'

/** One PutObject, or one POST Object when `form` (engine/s3/form.ts) holds the file as a form's body. */
export async function putSingle(
  file: Bytes,
  sign: Signer,
  result: (etag: string, reply: HttpResponse) => UploadResult | Promise<UploadResult>,
  run: UploadRun,
  form?: FormBody,
): Promise<UploadResult> {
  const { signal } = run.options
  const size = sizeOf(file)
  const progress = startTransfer(run, () => size)
  const onSent = (sent: number) => {
    // A form's fields go first: its bytes sent count from the file's first.
    const bytes = form ? Math.min(size, Math.max(0, sent - form.head)) : sent
    // Its last byte has left (an empty body's at once): storage may be writing the object, which
    // an abort can no longer stop.
    if (bytes === size) run.phase = 'committing'
    progress.sent(1, bytes)
  }
  // A pause cancels the PUT (S3 cannot keep half an object): it is sent again whole on resume.
  const response = await bodyRequest(
    run,
    signal,
    (held) => send(run, sign, { body: form?.body ?? file, signal, onSent, held }),
    () => progress.sent(1, 0),
  )
  run.phase = 'committing'
  progress.done()
  return result(response.header('ETag') ?? '', response)
}

/**
 * One body request (a single PUT, a part): in a slot of the shared `queue` when there is one, and
 * held by a pause (the `hold` hook) when the upload has a `pauseSignal`. `onHeld`: a pause
 * stopped it (its bytes in flight no longer count).
 */
export function bodyRequest<T>(
  run: UploadRun,
  signal: AbortSignal | undefined,
  task: (held?: AbortSignal) => Promise<T>,
  onHeld: () => void,
): Promise<T> {
  const { queue } = run.options
  const queued = (held?: AbortSignal) => (queue ? queue.run(() => task(held), signal) : task(held))
  return run.hooks.hold ? run.hooks.hold(queued, signal, onHeld) : queued()
}
