import { type HashReply, type HashRequest, workerSource } from './hash-worker.ts'

/** One hashing worker, as the pool (off-thread.ts) drives it, whatever the runtime's kind of worker. */
export interface HashWorker {
  post(request: HashRequest, transfer: Transferable[]): void
  /** Whether it has work: a Node worker holds the process open only then. */
  busy(busy: boolean): void
  stop(): void
}

/**
 * A Web Worker made from the hashing program's source, through a Blob URL: the package ships no
 * worker file and bundlers need no setting. `undefined` where the runtime has no workers or
 * refuses this one at once; a refusal reported later (Chromium's for a CSP `worker-src` without
 * blob:) calls `failed`. The build for Node (`#hash-worker`) is start-worker.node.ts.
 */
export function startWorker(reply: (reply: HashReply) => void, failed: () => void): HashWorker | undefined {
  if (typeof Worker !== 'function') return undefined
  let url: string | undefined
  let worker: Worker
  try {
    url = URL.createObjectURL(new Blob([workerSource()], { type: 'text/javascript' }))
    worker = new Worker(url)
  } catch {
    // Older browsers throw a SecurityError here for a CSP that forbids blob: workers.
    if (url) URL.revokeObjectURL(url)
    return undefined
  }
  worker.onmessage = ({ data }: MessageEvent<HashReply>) => reply(data)
  worker.onerror = (event) => {
    event.preventDefault()
    failed()
  }
  worker.onmessageerror = failed
  return {
    post: (request, transfer) => worker.postMessage(request, transfer),
    busy() {},
    stop() {
      worker.terminate()
      URL.revokeObjectURL(url)
    },
  }
}
