// The hashing worker's program and message protocol, run in Node against a stand-in for the
// worker's global scope: from the module, from its source text (what the Blob URL holds), and from
// that text as a minifying, down-levelling bundler leaves it. Real workers: engine-checksums-browser.
import { createHash } from 'node:crypto'
import { Worker as NodeWorker } from 'node:worker_threads'
import { build } from 'esbuild'
import { describe, expect, it, vi } from 'vitest'
import { crc } from '../../engine/opt-ins/checksums/crc.ts'
import { digest, digestWith } from '../../engine/opt-ins/checksums/digest.ts'
import {
  type HashReply,
  type HashRequest,
  serveHashing,
  type WorkerScope,
  workerSource,
} from '../../engine/opt-ins/checksums/hash-worker.ts'
import { hashBody, IN_PLACE_BELOW } from '../../engine/opt-ins/checksums/off-thread.ts'
import { startWorker as startNodeWorker } from '../../engine/opt-ins/checksums/start-worker.node.ts'
import { md5 } from '../../engine/opt-ins/md5.ts'

const ALGORITHMS = ['crc32', 'crc32c', 'sha256', 'md5'] as const

/** A worker scope that records replies; `ask` posts a request and waits for its reply. */
function standIn() {
  const replies: Array<{ reply: HashReply; transfer?: Transferable[] }> = []
  const waiting = new Map<number, (reply: HashReply) => void>()
  const scope: WorkerScope = {
    onmessage: null,
    postMessage(reply, transfer) {
      replies.push({ reply, transfer })
      if ('id' in reply) waiting.get(reply.id)?.(reply)
    },
  }
  const ask = (request: HashRequest) =>
    new Promise<HashReply>((resolve) => {
      waiting.set(request.id, resolve)
      scope.onmessage!({ data: request })
    })
  return { scope, replies, ask }
}

const bytes = Uint8Array.from({ length: 100_003 }, (_, i) => (i * 2654435761) >>> 24)

async function expectServes(run: (scope: WorkerScope) => void) {
  const { scope, replies, ask } = standIn()
  run(scope)
  expect(replies[0]!.reply).toEqual({ ready: true })
  let id = 1
  for (const algorithm of ALGORITHMS) {
    const expected = await digest(algorithm, bytes)
    expect(await ask({ id, algorithm, body: new Blob([bytes]) })).toEqual({ id: id++, digest: expected })
    expect(await ask({ id, algorithm, body: bytes.slice() })).toEqual({ id: id++, digest: expected })
  }
  return { replies, ask }
}

describe('the hashing worker program', () => {
  it('says it is ready, then answers each Blob or Uint8Array body with its digest, the digest buffer transferred', async () => {
    const { replies } = await expectServes((scope) => serveHashing(scope, digestWith, crc, md5))
    const last = replies.at(-1)!
    expect(last.transfer).toEqual([(last.reply as { digest: Uint8Array }).digest.buffer])
    expect(Buffer.from((last.reply as { digest: Uint8Array }).digest).toString('base64')).toBe(
      createHash('md5').update(bytes).digest('base64'),
    )
  })

  it('answers a body it cannot read with an error naming why, for that request only', async () => {
    const { scope, ask } = standIn()
    serveHashing(scope, digestWith, crc, md5)
    const unreadable = {
      arrayBuffer: () => Promise.reject(new Error('NotReadableError: the file changed')),
    } as unknown as Blob
    expect(await ask({ id: 7, algorithm: 'md5', body: unreadable })).toEqual({
      id: 7,
      error: 'Error: NotReadableError: the file changed',
    })
    expect(await ask({ id: 8, algorithm: 'crc32', body: bytes })).toEqual({
      id: 8,
      digest: await digest('crc32', bytes),
    })
  })

  it('runs from its source text alone (what the Blob URL holds): no name from outside it', async () => {
    await expectServes((scope) => new Function('self', workerSource())(scope))
  })

  it('runs from its text after a minifying bundler down-levelled it to ES2017 (renamed names, no helpers)', async () => {
    const { outputFiles } = await build({
      stdin: {
        contents: `export { workerSource } from './engine/opt-ins/checksums/hash-worker.ts'`,
        loader: 'ts',
        resolveDir: process.cwd(),
      },
      bundle: true,
      format: 'esm',
      platform: 'browser',
      target: 'es2017',
      minify: true,
      write: false,
      logLevel: 'silent',
    })
    const bundled = (await import(`data:text/javascript,${encodeURIComponent(outputFiles[0]!.text)}`)) as {
      workerSource: () => string
    }
    expect(bundled.workerSource()).not.toBe(workerSource())
    await expectServes((scope) => new Function('self', bundled.workerSource())(scope))
  })
})

describe('the Node build of the worker (worker_threads)', () => {
  it('runs the same program from its source: says it is ready, answers Blob and Uint8Array bodies', async () => {
    const replies: HashReply[] = []
    let failed = false
    const answered = new Promise<void>((resolve) => {
      const worker = startNodeWorker(
        (reply) => {
          replies.push(reply)
          if (replies.length === 3) {
            worker.stop()
            resolve()
          }
        },
        () => (failed = true),
      )!
      worker.busy(true)
      worker.post({ id: 1, algorithm: 'md5', body: new Blob([bytes]) }, [])
      const copy = bytes.slice()
      worker.post({ id: 2, algorithm: 'crc32c', body: copy }, [copy.buffer])
    })
    await answered
    expect(failed).toBe(false)
    expect(replies).toEqual([
      { ready: true },
      { id: 1, digest: new Uint8Array(createHash('md5').update(bytes).digest()) },
      { id: 2, digest: await digest('crc32c', bytes) },
    ])
  })
})

describe('hashBody', () => {
  it('in Node, posts bodies from 64 KiB up to a worker_threads worker and hashes smaller ones in place', async () => {
    const posted = vi.spyOn(NodeWorker.prototype, 'postMessage')
    try {
      const big = new Blob([bytes])
      expect(await hashBody('md5', big)).toEqual(await digest('md5', bytes))
      expect(await hashBody('crc32', bytes.subarray(0, IN_PLACE_BELOW - 1))).toEqual(
        await digest('crc32', bytes.subarray(0, IN_PLACE_BELOW - 1)),
      )
      expect(posted.mock.calls).toEqual([[{ id: expect.any(Number), algorithm: 'md5', body: big }, []]])
    } finally {
      posted.mockRestore()
    }
  })

  it("gives every algorithm's digest of Blob and Uint8Array bodies, below and above the in-place size, many at once", async () => {
    const bodies = [bytes, bytes.subarray(3, 70_000), bytes.subarray(0, IN_PLACE_BELOW - 1)]
    await Promise.all(
      ALGORITHMS.flatMap((algorithm) =>
        bodies.flatMap((body) => [
          hashBody(algorithm, body).then(async (hash) => expect(hash).toEqual(await digest(algorithm, body))),
          hashBody(algorithm, new Blob([body])).then(async (hash) =>
            expect(hash).toEqual(await digest(algorithm, body)),
          ),
        ]),
      ),
    )
  })
})
