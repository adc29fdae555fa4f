// The hook's list controls (src/upload-controls.ts) and its leave-page warning: addFiles with a
// check that refuses before any request, Retry by calling the upload again, Remove, Clear finished.
import { act, cleanup, renderHook } from '@testing-library/react'
import { afterEach, describe, expect, it } from 'vitest'
import { NetworkError } from '../../../engine/core/errors.ts'
import { createQueue } from '../../../engine/transport/queue.ts'
import type { UseS3UploadOptions } from '../../../src/upload-options.ts'
import { useS3Upload } from '../../../src/useS3Upload.ts'
import { stubUploader } from '../../helpers/stub-uploader.ts'

afterEach(cleanup)

const result = { url: 'http://127.0.0.1:9000/uploads/k', bucket: 'uploads', key: 'k', etag: '"e"' }
const file = (size: number, name: string, type = 'application/octet-stream') =>
  new File([new Uint8Array(size)], name, { type })

function renderUploads(extra: UseS3UploadOptions = {}) {
  const stub = stubUploader()
  const rendered = renderHook(() => useS3Upload({ queue: createQueue(4), ...extra }), { wrapper: stub.wrapper })
  return { ...stub, hook: rendered.result }
}

describe('addFiles', () => {
  it('uploads files in the order given; a file the check refuses is listed with its reason and never sent', async () => {
    const tooBig = new Error('too big')
    const { hook, calls, uploader } = renderUploads({ check: (f) => (f.size > 100 ? tooBig : undefined) })
    let outcomes!: Promise<PromiseSettledResult<unknown>[]>
    act(() => void (outcomes = hook.current.addFiles([file(10, 'a.bin'), file(500, 'big.bin'), file(20, 'b.bin')])))
    expect(uploader).toHaveBeenCalledTimes(2)
    expect(calls.map((c) => c.file.name)).toEqual(['a.bin', 'b.bin'])
    expect(hook.current.files.map((f) => [f.file.name, f.status])).toEqual([
      ['a.bin', 'queued'],
      ['big.bin', 'error'],
      ['b.bin', 'queued'],
    ])
    expect(hook.current.files[1]!.error).toBe(tooBig)
    await act(async () => {
      calls[0]!.resolve(result)
      calls[1]!.reject(new NetworkError('offline'))
    })
    // Settled, never rejected: a drop handler has nobody to catch a rejection.
    expect((await outcomes).map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'rejected'])
  })

  it("sends a file's path inside a picked folder as its filename, and a plain file's name as is", () => {
    const { hook, calls } = renderUploads()
    const inFolder = file(10, 'a.jpg')
    Object.defineProperty(inFolder, 'webkitRelativePath', { value: 'holiday/day 1/a.jpg' })
    const tricky = file(10, 'b.jpg')
    Object.defineProperty(tricky, 'webkitRelativePath', { value: 'x/../../b.jpg' })
    act(() => void hook.current.addFiles([inFolder, file(10, 'plain.txt'), tricky]))
    expect(calls.map((c) => c.options.filename)).toEqual(['holiday/day 1/a.jpg', undefined, 'x/b.jpg'])
  })
})

describe('retry, remove, clearEnded', () => {
  it("retry uploads a failed file again as a new entry in the failed one's place (the row does not move to the end)", async () => {
    const { hook, calls } = renderUploads()
    act(() => void hook.current.addFiles([file(10, 'flaky.bin'), file(10, 'other.bin')]))
    await act(async () => calls[0]!.reject(new NetworkError('Failed to fetch')))
    const failed = hook.current.files[0]!
    expect(failed.status).toBe('error')

    let retried!: Promise<unknown>
    act(() => void (retried = hook.current.retry(failed.id)))
    expect(calls).toHaveLength(3)
    expect(calls[2]!.file).toBe(failed.file)
    expect(hook.current.files.map((f) => [f.file.name, f.status])).toEqual([
      ['flaky.bin', 'queued'],
      ['other.bin', 'queued'],
    ])
    expect(hook.current.files[0]!.id).not.toBe(failed.id)
    await act(async () => calls[2]!.resolve(result))
    expect(await retried).toEqual({ status: 'fulfilled', value: result })
    expect(hook.current.files[0]).toMatchObject({ status: 'done', result })
  })

  it('retry of a running or unknown entry does nothing', async () => {
    const { hook, calls } = renderUploads()
    act(() => void hook.current.addFiles([file(10, 'running.bin')]))
    await act(async () => expect(await hook.current.retry(hook.current.files[0]!.id)).toBeUndefined())
    await act(async () => expect(await hook.current.retry('nope')).toBeUndefined())
    expect(calls).toHaveLength(1)
  })

  it('remove aborts a running upload and takes it off; its late outcome does not bring it back', async () => {
    const { hook, calls } = renderUploads()
    act(() => void hook.current.addFiles([file(10, 'a.bin'), file(10, 'b.bin')]))
    act(() => hook.current.remove(hook.current.files[0]!.id))
    expect(calls[0]!.options.signal!.aborted).toBe(true)
    await act(async () => {}) // the stub rejects with AbortError; the list ignores it
    expect(hook.current.files.map((f) => f.file.name)).toEqual(['b.bin'])
  })

  it('clearEnded takes finished, failed and refused entries off while others keep running', async () => {
    const { hook, calls } = renderUploads({ check: (f) => (f.name.endsWith('.exe') ? new Error('no') : undefined) })
    act(() => void hook.current.addFiles([file(10, 'done.bin'), file(10, 'x.exe'), file(10, 'running.bin')]))
    await act(async () => calls[0]!.resolve(result))
    act(() => hook.current.clearEnded())
    expect(hook.current.files.map((f) => [f.file.name, f.status])).toEqual([['running.bin', 'queued']])
  })
})

describe('leaving the page while uploads run', () => {
  const leave = () => {
    const event = new Event('beforeunload', { cancelable: true })
    window.dispatchEvent(event)
    return event.defaultPrevented
  }

  it('asks first while an upload runs, and no longer once it has ended', async () => {
    const { hook, calls } = renderUploads()
    expect(leave()).toBe(false)
    act(() => void hook.current.addFiles([file(10, 'a.bin')]))
    expect(leave()).toBe(true)
    await act(async () => calls[0]!.resolve(result))
    expect(leave()).toBe(false)
  })

  it('warnBeforeLeaving: false never asks', () => {
    const { hook } = renderUploads({ warnBeforeLeaving: false })
    act(() => void hook.current.addFiles([file(10, 'a.bin')]))
    expect(leave()).toBe(false)
  })
})
