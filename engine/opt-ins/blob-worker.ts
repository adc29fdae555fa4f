/** A Web Worker started from source text, as the opt-ins that work off the page's main thread drive it. */
export interface BlobWorker<Request> {
  post(request: Request, transfer?: Transferable[]): void
  stop(): void
}

/**
 * A Web Worker made from a program's source, through a Blob URL: the package ships no worker file
 * and bundlers need no setting. `undefined` where the runtime has no workers or refuses this one at
 * once; a refusal reported later (Chromium's for a CSP `worker-src` without blob:) calls `failed`.
 */
export function startBlobWorker<Request, Reply>(
  source: string,
  reply: (reply: Reply) => void,
  failed: () => void,
): BlobWorker<Request> | undefined {
  if (typeof Worker !== 'function') return undefined
  let url: string | undefined
  let worker: Worker
  try {
    url = URL.createObjectURL(new Blob([source], { type: 'text/javascript' }))
    worker = new Worker(url)
  } catch {
    // Older browsers throw a SecurityError here for a CSP that forbids blob: workers.
    if (url) URL.revokeObjectURL(url)
    return undefined
  }
  worker.onmessage = ({ data }: MessageEvent<Reply>) => reply(data)
  worker.onerror = (event) => {
    event.preventDefault()
    failed()
  }
  worker.onmessageerror = failed
  return {
    post: (request, transfer = []) => worker.postMessage(request, transfer),
    stop() {
      worker.terminate()
      URL.revokeObjectURL(url)
    },
  }
}
