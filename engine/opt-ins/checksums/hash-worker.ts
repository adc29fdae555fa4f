// The hashing worker's program and its message protocol. The worker is made from source text
// (a Blob URL of a string), so the package ships no worker file and bundlers need no setting:
// its program and the hash functions it calls are each self-contained, and a function's text
// (`Function.prototype.toString`) survives any bundler whole, names renamed only inside it.
import { md5 } from '../md5.ts'
import { crc } from './crc.ts'
import { type ChecksumAlgorithm, digestWith } from './digest.ts'

/**
 * Page to worker: hash one body. A Blob is posted as it is (its structured clone shares the
 * bytes, the worker reads them); a Uint8Array as a copy of its own bytes, transferred.
 */
export interface HashRequest {
  id: number
  algorithm: ChecksumAlgorithm
  body: Blob | Uint8Array
}

/** Worker to page: `ready` once its program runs, then for each request its digest or why it has none. */
export type HashReply = { ready: true } | { id: number; digest: Uint8Array } | { id: number; error: string }

/** What the program needs of its global scope: a DedicatedWorkerGlobalScope, or a stand-in in unit tests. */
export interface WorkerScope {
  onmessage: ((event: { data: HashRequest }) => void) | null
  postMessage(reply: HashReply, transfer?: Transferable[]): void
}

/** The worker's program. Self-contained, as the functions it is given: it runs from its own text. */
export function serveHashing(
  scope: WorkerScope,
  digestOf: typeof digestWith,
  crcOf: typeof crc,
  md5Of: typeof md5,
): void {
  scope.onmessage = ({ data: { id, algorithm, body } }) => {
    const bytes =
      body instanceof Uint8Array ? Promise.resolve(body) : body.arrayBuffer().then((buffer) => new Uint8Array(buffer))
    bytes
      .then((view) => digestOf(crcOf, md5Of, algorithm, view))
      .then(
        (digest) => scope.postMessage({ id, digest }, [digest.buffer as ArrayBuffer]),
        (error: unknown) => scope.postMessage({ id, error: String(error) }),
      )
  }
  scope.postMessage({ ready: true })
}

/** The worker's whole source: its program called with the hash functions, all as text. */
export const workerSource = () => `(${serveHashing})(self,${digestWith},${crc},${md5})`
