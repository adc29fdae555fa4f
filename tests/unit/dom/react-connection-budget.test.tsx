import { act, cleanup, renderHook } from '@testing-library/react'
import { afterEach, describe, expect, it } from 'vitest'
import type { UploadOptions, UploadResult } from '../../../engine/index.ts'
import { createQueue } from '../../../engine/transport/queue.ts'
import { MIN_PART_SIZE } from '../../../protocol/limits.ts'
import { uploadWithinBudget } from '../../../src/connection-budget.ts'
import type { Uploader } from '../../../src/uploader.ts'
import { useS3Upload } from '../../../src/useS3Upload.ts'
import { withUploader } from '../../helpers/stub-uploader.ts'

afterEach(cleanup)

const tick = () => new Promise((r) => setTimeout(r, 0))
const result: UploadResult = { url: 'u', bucket: 'b', key: 'k', etag: 'e' }

/** A File that claims `size` bytes without allocating them: the budget looks at size only. */
function sizedFile(size: number, name = 'f') {
  const file = new File([], name)
  Object.defineProperty(file, 'size', { value: size })
  return file
}

/**
 * Plays the engine's part of the bargain: a single PUT is one connection, a multipart upload
 * runs its parts `queueSize` at a time, and each of those requests takes a slot of
 * `options.queue` when one is given.
 * Counts connections open at once across every upload, and lets the test finish them.
 */
function connectionCounter() {
  let open = 0
  let peak = 0
  const finishers: Array<() => void> = []
  const connection = () =>
    new Promise<void>((resolve) => {
      peak = Math.max(peak, ++open)
      finishers.push(() => (open--, resolve()))
    })
  const uploader: Uploader = async (file: File, options: UploadOptions) => {
    const parts = Math.ceil(file.size / MIN_PART_SIZE)
    if (parts <= 1) await (options.queue ? options.queue.run(connection) : connection())
    else {
      let next = 0
      const worker = async () => {
        while (next < parts) {
          next++
          await (options.queue ? options.queue.run(connection) : connection())
        }
      }
      await Promise.all(Array.from({ length: options.partConcurrency ?? 4 }, worker))
    }
    return result
  }
  const finishAll = async () => {
    while (finishers.length) {
      for (const finish of finishers.splice(0)) finish()
      await tick()
    }
  }
  return { uploader, finishAll, peak: () => peak, open: () => open }
}

describe('one connection budget for many files', () => {
  it('10 small files and 3 large ones never hold more connections than the queue allows', async () => {
    const counter = connectionCounter()
    const queue = createQueue(3)
    const files = [
      ...Array.from({ length: 10 }, (_, i) => sizedFile(1000, `small-${i}`)),
      ...Array.from({ length: 3 }, (_, i) => sizedFile(4 * MIN_PART_SIZE, `large-${i}`)),
    ]
    const uploads = files.map((file) => uploadWithinBudget(counter.uploader, file, {}, queue))
    await tick()
    expect(counter.open()).toBe(3)
    await counter.finishAll()
    await expect(Promise.all(uploads)).resolves.toHaveLength(13)
    expect(counter.peak()).toBe(3)
  })

  it('starts at most 4 multipart files per queue, so idle files open no multipart upload or token yet', async () => {
    const counter = connectionCounter()
    const queue = createQueue(8)
    const started: string[] = []
    const uploader: Uploader = (file, options) => (started.push(file.name), counter.uploader(file, options))
    const uploads = Array.from({ length: 6 }, (_, i) =>
      uploadWithinBudget(uploader, sizedFile(2 * MIN_PART_SIZE, `f${i}`), {}, queue),
    )
    await tick()
    expect(started).toEqual(['f0', 'f1', 'f2', 'f3'])
    await counter.finishAll()
    await Promise.all(uploads)
    expect(started).toHaveLength(6)
  })

  it('regression (issue 34): the queue passed in bounded nothing past 4 files; single-PUT files now fill every slot it has', async () => {
    const counter = connectionCounter()
    const queue = createQueue(6)
    const uploads = Array.from({ length: 20 }, (_, i) =>
      uploadWithinBudget(counter.uploader, sizedFile(10, `f${i}`), {}, queue),
    )
    await tick()
    expect(counter.open()).toBe(6)
    await counter.finishAll()
    await Promise.all(uploads)
    expect(counter.peak()).toBe(6)
  })

  it('single-PUT files start 200 ahead, then 100 at a time, so each 100 are asked for together', async () => {
    const queue = createQueue(6)
    const started: string[] = []
    const finish = new Map<string, () => void>()
    const uploader: Uploader = (file) => {
      started.push(file.name)
      return new Promise((resolve) => finish.set(file.name, () => resolve(result)))
    }
    const uploads = Array.from({ length: 350 }, (_, i) =>
      uploadWithinBudget(uploader, sizedFile(10, `f${i}`), {}, queue),
    )
    await tick()
    expect(started).toHaveLength(200)
    for (let i = 0; i < 99; i++) finish.get(`f${i}`)!()
    await tick()
    expect(started).toHaveLength(200)
    finish.get('f99')!()
    await tick()
    expect(started).toHaveLength(300)
    for (let i = 100; i < 350; i++) {
      await tick()
      finish.get(`f${i}`)?.()
    }
    for (let i = 0; i < 50 && started.length < 350; i++) await tick()
    for (const done of finish.values()) done()
    await expect(Promise.all(uploads)).resolves.toHaveLength(350)
    expect(new Set(started).size).toBe(350)
  })

  it("through the hook: every uploadToS3 call shares the hook's queue", async () => {
    const counter = connectionCounter()
    const { result: hook } = renderHook(() => useS3Upload({ queue: createQueue(2) }), {
      wrapper: withUploader(counter.uploader),
    })
    let all!: Promise<UploadResult[]>
    act(() => {
      all = Promise.all(
        [sizedFile(10), sizedFile(10), sizedFile(2 * MIN_PART_SIZE), sizedFile(10)].map((f) =>
          hook.current.uploadToS3(f),
        ),
      )
    })
    await act(tick)
    expect(counter.open()).toBe(2)
    expect(hook.current.files.map((f) => f.status)).toEqual(['queued', 'queued', 'queued', 'queued'])
    await act(counter.finishAll)
    await all
    expect(counter.peak()).toBe(2)
    expect(hook.current.files.every((f) => f.status === 'done')).toBe(true)
  })
})
