import type { UploadResult } from '../protocol/wire.ts'
import { callBack } from './callback.ts'
import { UploadAbortedError } from './errors.ts'
import { type EndpointOptions, resolveOptions, type ResolvedOptions, type TransferOptions } from './options.ts'

/**
 * Runs one upload so that its promise settles within a bound whatever storage does. `abort()`
 * rejects it at once with `AbortError` — unless the upload is committing (Complete sent, or a
 * single PUT's last byte gone), when the outcome decides: resolved if storage completed it. The
 * work goes on in the background only to clean up (and is itself bounded by stall timeouts and
 * the cleanup deadline); once everything it started is over, `onCleanup` hears how that ended.
 */
export async function runUpload<O extends TransferOptions & EndpointOptions>(
  options: O,
  upload: (resolved: O & ResolvedOptions) => Promise<UploadResult>,
): Promise<UploadResult> {
  const resolved = resolveOptions(options) as O & ResolvedOptions
  const { signal } = resolved
  const work = upload(resolved)
  const dispose = () => resolved.gate?.dispose()
  work.then(dispose, dispose)
  const over = () =>
    Promise.all(resolved.cleanups).then((errors) => callBack(resolved.onCleanup, errors.find((error) => error !== undefined)))
  work.then(over, over)
  return new Promise<UploadResult>((resolve, reject) => {
    const onAbort = () => resolved.completing || reject(new UploadAbortedError())
    signal?.addEventListener('abort', onAbort)
    if (signal?.aborted) onAbort()
    work
      .then(resolve, (error) => reject(signal?.aborted ? new UploadAbortedError() : error))
      .finally(() => signal?.removeEventListener('abort', onAbort))
  })
}
