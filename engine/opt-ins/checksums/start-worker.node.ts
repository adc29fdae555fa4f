import { Worker } from 'node:worker_threads'
import { type HashReply, workerSource } from './hash-worker.ts'
import type { HashWorker } from './start-worker.ts'

/** The program's `self`, in a worker_threads worker: its parent port, spoken to as a Web Worker's scope. */
const SCOPE = `const{parentPort}=require('node:worker_threads');const self={set onmessage(listener){parentPort.on('message',(data)=>listener({data}))},postMessage:(reply,transfer)=>parentPort.postMessage(reply,transfer)};`

/**
 * The Node build of `#hash-worker` (Node, Bun, Deno): a worker_threads worker running the same
 * program from its source. Node's uploads over node:http are CPU-bound on their one thread, so a
 * hash there slows the upload itself (bench/throughput.ts's checksum table). Unreferenced while
 * idle: a finished upload does not keep the process alive.
 */
export function startWorker(reply: (reply: HashReply) => void, failed: () => void): HashWorker | undefined {
  let worker: Worker
  try {
    worker = new Worker(SCOPE + workerSource(), { eval: true })
  } catch {
    return undefined
  }
  worker.on('message', reply)
  worker.on('error', failed)
  worker.on('messageerror', failed)
  worker.unref()
  return {
    post: (request, transfer) => worker.postMessage(request, transfer as never),
    busy: (busy) => void (busy ? worker.ref() : worker.unref()),
    stop: () => void worker.terminate(),
  }
}
