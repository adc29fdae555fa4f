import { startBlobWorker } from '../blob-worker.ts'
import { type HashReply, type HashRequest, workerSource } from './hash-worker.ts'

/** One hashing worker, as the pool (off-thread.ts) drives it, whatever the runtime's kind of worker. */
export interface HashWorker {
  post(request: HashRequest, transfer: Transferable[]): void
  /** Whether it has work: a Node worker holds the process open only then. */
  busy(busy: boolean): void
  stop(): void
}

/**
 * The hashing program in a Web Worker (../blob-worker.ts): `undefined` where none can start. The
 * build for Node (`#hash-worker`) is start-worker.node.ts.
 */
export function startWorker(reply: (reply: HashReply) => void, failed: () => void): HashWorker | undefined {
  const worker = startBlobWorker<HashRequest, HashReply>(workerSource(), reply, failed)
  return worker && { ...worker, busy() {} }
}
