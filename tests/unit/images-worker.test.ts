// The image worker's program and message protocol, run in Node against a stand-in for the worker's
// global scope: images one at a time in order, a drawing that fails answered as an error, and the
// program's source text (what the Blob URL holds), as a minifying, down-levelling bundler leaves it,
// self-contained. Node has no image decoder: from the text, every image answers `undecodable`.
// The real decoding, drawing and encoding: images-browser.test.ts in Chromium and Firefox ESR.
import { build } from 'esbuild'
import { describe, expect, it } from 'vitest'
import { fitWithin } from '../../engine/opt-ins/images/plan.ts'
import {
  type drawSmaller,
  type ShrinkJob,
  type ShrinkReply,
  type ShrinkRequest,
  type ShrinkScope,
  serveShrinking,
  workerSource,
} from '../../engine/opt-ins/images/shrink.ts'

/** A worker scope that records replies; `post` hands it a request as a message would. */
function standIn() {
  const replies: ShrinkReply[] = []
  const scope: ShrinkScope = { onmessage: null, postMessage: (reply) => void replies.push(reply) }
  const post = (request: ShrinkRequest) => scope.onmessage!({ data: request })
  const answered = (count: number) =>
    new Promise<void>((resolve) => {
      const poll = () => (replies.filter((reply) => 'id' in reply).length >= count ? resolve() : setTimeout(poll, 1))
      poll()
    })
  return { scope, replies, post, answered }
}

const job = (label: string): ShrinkJob => ({
  image: new Blob([label]),
  maxWidth: 10,
  maxHeight: 10,
  quality: 0.8,
  type: 'image/jpeg',
  fallback: 'image/jpeg',
  convert: false,
})

describe('the image worker program', () => {
  it('says it is ready, then draws images one at a time, in order, answering each by its id', async () => {
    const { scope, replies, post, answered } = standIn()
    const events: string[] = []
    const draw = (async (request: ShrinkJob) => {
      const label = await request.image.text()
      events.push(`start ${label}`)
      await new Promise((resolve) => setTimeout(resolve, label === 'slow' ? 30 : 1))
      events.push(`end ${label}`)
      if (label === 'broken') throw new Error('canvas refused')
      return { unchanged: 'fits' as const }
    }) as typeof drawSmaller
    serveShrinking(scope, draw, fitWithin)
    expect(replies).toEqual([{ ready: true }])
    post({ id: 1, job: job('slow') })
    post({ id: 2, job: job('broken') })
    post({ id: 3, job: job('quick') })
    await answered(3)
    expect(events).toEqual(['start slow', 'end slow', 'start broken', 'end broken', 'start quick', 'end quick'])
    expect(replies.slice(1)).toEqual([
      { id: 1, outcome: { unchanged: 'fits' } },
      { id: 2, error: 'Error: canvas refused' },
      { id: 3, outcome: { unchanged: 'fits' } },
    ])
  })

  it('runs from its text after a minifying bundler down-levelled it to ES2017 (renamed names, no helpers)', async () => {
    const { outputFiles } = await build({
      stdin: {
        contents: `export { workerSource } from './engine/opt-ins/images/shrink.ts'`,
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
    for (const source of [workerSource(), bundled.workerSource()]) {
      const { scope, replies, post, answered } = standIn()
      new Function('self', source)(scope)
      post({ id: 7, job: job('not an image') })
      await answered(1)
      // Node decodes no image.
      expect(replies).toEqual([{ ready: true }, { id: 7, outcome: { unchanged: 'undecodable' } }])
      // A stand-in decoder: the program reaches the fit it was given (an outside name would be a
      // ReferenceError), and then the canvas, which Node lacks.
      const closed: number[] = []
      Object.assign(globalThis, {
        createImageBitmap: async () => ({ width: 20, height: 10, close: () => void closed.push(1) }),
      })
      try {
        post({ id: 8, job: { ...job('small'), maxWidth: 100, maxHeight: 100 } })
        post({ id: 9, job: job('large') })
        await answered(3)
      } finally {
        delete (globalThis as { createImageBitmap?: unknown }).createImageBitmap
      }
      expect(replies[2]).toEqual({ id: 8, outcome: { unchanged: 'fits' } })
      expect(replies[3]).toMatchObject({
        id: 9,
        error: expect.stringMatching(/^ReferenceError: document is not defined/),
      })
      expect(closed).toHaveLength(2) // every bitmap closed, drawn or not
    }
  })
})
