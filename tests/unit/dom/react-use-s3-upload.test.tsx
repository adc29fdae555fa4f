import { act, cleanup, renderHook } from '@testing-library/react'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { ApiError } from '../../../engine/core/errors.ts'
import type { UploadResult } from '../../../engine/index.ts'
import { createQueue } from '../../../engine/transport/queue.ts'
import { MIN_PART_SIZE } from '../../../protocol/limits.ts'
import { useS3Upload } from '../../../src/useS3Upload.ts'
import { stubUploader } from '../../helpers/stub-uploader.ts'

afterEach(() => {
  cleanup()
  vi.useRealTimers()
})

const file = (size: number, name = 'photo.jpg') => new File([new Uint8Array(size)], name, { type: 'image/jpeg' })
/** A File that claims two parts' bytes without holding them: the hook starts 4 such at once per queue. */
const multipartFile = (name: string) => {
  const large = file(10, name)
  Object.defineProperty(large, 'size', { value: 2 * MIN_PART_SIZE })
  return large
}
const result: UploadResult = { url: 'http://127.0.0.1:9000/uploads/k', bucket: 'uploads', key: 'k', etag: '"abc"' }

/** Marks a rejection as expected now; the test still awaits the promise itself afterwards. */
const handled = <T,>(promise: Promise<T>) => (promise.catch(() => {}), promise)

function renderUploads(extra: Parameters<typeof useS3Upload>[0] = {}) {
  const stub = stubUploader()
  let renders = 0
  const rendered = renderHook(
    () => {
      renders++
      return useS3Upload({ queue: createQueue(4), ...extra })
    },
    { wrapper: stub.wrapper },
  )
  return { ...stub, ...rendered, renders: () => renders }
}

describe('useS3Upload with a stubbed upload', () => {
  it('lists the file at once, queued at 0%, and passes the file to the uploader', () => {
    const { result: hook, calls } = renderUploads()
    act(() => void hook.current.uploadToS3(file(1000)).catch(() => {}))
    expect(hook.current.files).toHaveLength(1)
    expect(hook.current.files[0]).toMatchObject({ progress: 0, uploaded: 0, size: 1000, status: 'queued' })
    expect(hook.current.files[0]!.file.name).toBe('photo.jpg')
    expect(calls[0]!.file.name).toBe('photo.jpg')
  })

  it('throttles progress to ~10 renders a second, and the last value lands', () => {
    vi.useFakeTimers()
    const { result: hook, calls, renders } = renderUploads()
    act(() => void hook.current.uploadToS3(file(100_000)).catch(() => {}))
    const { onProgress } = calls[0]!.options
    const before = renders()
    // 200 progress events over one second, each in its own task as XHR delivers them.
    for (let i = 1; i <= 200; i++) {
      act(() => {
        onProgress!({ loaded: i * 500, total: 100_000 })
        vi.advanceTimersByTime(5)
      })
    }
    act(() => void vi.advanceTimersByTime(100))
    expect(renders() - before).toBeGreaterThanOrEqual(10)
    expect(renders() - before).toBeLessThanOrEqual(12)
    expect(hook.current.files[0]).toMatchObject({ status: 'uploading', uploaded: 100_000, progress: 100 })
  })

  it('the first progress event shows at once and marks the entry uploading', () => {
    const { result: hook, calls } = renderUploads()
    act(() => void hook.current.uploadToS3(file(1000)).catch(() => {}))
    act(() => calls[0]!.options.onProgress!({ loaded: 0, total: 1000 }))
    expect(hook.current.files[0]).toMatchObject({ status: 'uploading', progress: 0 })
  })

  it('resolves with the result, and the entry is done at 100% with it', async () => {
    const { result: hook, calls } = renderUploads()
    let uploaded!: Promise<UploadResult>
    act(() => void (uploaded = handled(hook.current.uploadToS3(file(1000)))))
    act(() => calls[0]!.options.onProgress!({ loaded: 400, total: 1000 }))
    await act(async () => calls[0]!.resolve(result))
    await expect(uploaded).resolves.toEqual(result)
    expect(hook.current.files[0]).toMatchObject({ status: 'done', progress: 100, uploaded: 1000, result })
  })

  it('a pending throttled value is flushed before done: no timer is left behind', async () => {
    vi.useFakeTimers()
    const { result: hook, calls } = renderUploads()
    let uploaded!: Promise<UploadResult>
    act(() => void (uploaded = handled(hook.current.uploadToS3(file(1000)))))
    act(() => {
      calls[0]!.options.onProgress!({ loaded: 100, total: 1000 })
      calls[0]!.options.onProgress!({ loaded: 1000, total: 1000 })
    })
    await act(async () => calls[0]!.resolve(result))
    await uploaded
    expect(vi.getTimerCount()).toBe(0)
    expect(hook.current.files[0]).toMatchObject({ status: 'done', progress: 100 })
  })

  it('rejects with the engine error as is, and the entry shows its message', async () => {
    const { result: hook, calls } = renderUploads()
    let uploaded!: Promise<UploadResult>
    act(() => void (uploaded = handled(hook.current.uploadToS3(file(1000)))))
    const refusal = new ApiError('File type image/jpeg is not allowed', 400)
    await act(async () => calls[0]!.reject(refusal))
    await expect(uploaded).rejects.toBe(refusal)
    expect(hook.current.files[0]).toMatchObject({ status: 'error', error: refusal })
    expect(hook.current.files[0]!.error!.message).toBe('File type image/jpeg is not allowed')
  })

  it("an entry's abort() cancels the upload: status aborted, AbortError 'Upload aborted'", async () => {
    const { result: hook, calls } = renderUploads()
    let uploaded!: Promise<UploadResult>
    act(() => void (uploaded = handled(hook.current.uploadToS3(file(1000)))))
    act(() => calls[0]!.options.onProgress!({ loaded: 300, total: 1000 }))
    await act(async () => hook.current.files[0]!.abort())
    await expect(uploaded).rejects.toMatchObject({ name: 'AbortError', message: 'Upload aborted' })
    expect(calls[0]!.options.signal!.aborted).toBe(true)
    expect(hook.current.files[0]).toMatchObject({
      status: 'aborted',
      progress: 30,
      error: { message: 'Upload aborted' },
    })
  })

  it("an entry's pause() and resume() drive the engine's pauseSignal; the promise stays pending; the engine's state shows", async () => {
    const { result: hook, calls } = renderUploads()
    let settled = false
    act(
      () =>
        void hook.current
          .uploadToS3(file(1000))
          .finally(() => (settled = true))
          .catch(() => {}),
    )
    const { options } = calls[0]!
    expect(options.waitForNetwork).toBe(true)
    act(() => hook.current.files[0]!.pause())
    expect(options.pauseSignal!.paused).toBe(true)
    act(() => options.onStateChange!('paused'))
    expect(hook.current.files[0]!.status).toBe('paused')
    await act(async () => hook.current.files[0]!.resume())
    expect(options.pauseSignal!.paused).toBe(false)
    act(() => options.onStateChange!('running'))
    expect(hook.current.files[0]!.status).toBe('queued')
    expect(settled).toBe(false)
    await act(async () => calls[0]!.resolve({ url: 'u', bucket: 'b', key: 'k', etag: 'e' }))
    expect(hook.current.files[0]!.status).toBe('done')
  })

  it('a paused upload gives its start slot to a waiting one, and takes one again before it runs on', async () => {
    const { result: hook, uploader, calls } = renderUploads({ queue: createQueue(1) })
    act(() => {
      // Four multipart files start at once per queue; the fifth waits for one of them to end or pause.
      for (let i = 0; i < 5; i++) void hook.current.uploadToS3(multipartFile(`f${i}.jpg`)).catch(() => {})
    })
    expect(uploader).toHaveBeenCalledTimes(4)
    await act(async () => hook.current.files[0]!.pause())
    expect(uploader).toHaveBeenCalledTimes(5)
    expect(calls[0]!.options.pauseSignal!.paused).toBe(true)
    // Resumed while all four slots are taken: the engine stays paused until one frees.
    await act(async () => hook.current.files[0]!.resume())
    expect(calls[0]!.options.pauseSignal!.paused).toBe(true)
    await act(async () => calls[1]!.resolve({ url: 'u', bucket: 'b', key: 'k', etag: 'e' }))
    expect(calls[0]!.options.pauseSignal!.paused).toBe(false)
  })

  it('aborting an upload still waiting for its turn ends it without ever starting it', async () => {
    const { result: hook, uploader } = renderUploads({ queue: createQueue(1) })
    let fifth!: Promise<UploadResult>
    act(() => {
      // Four multipart files start at once per queue; the fifth waits for one of them to end.
      for (let i = 0; i < 4; i++) void hook.current.uploadToS3(multipartFile(`f${i}.jpg`)).catch(() => {})
      fifth = handled(hook.current.uploadToS3(multipartFile('fifth.jpg')))
    })
    expect(uploader).toHaveBeenCalledTimes(4)
    await act(async () => hook.current.files[4]!.abort())
    await expect(fifth).rejects.toMatchObject({ name: 'AbortError' })
    expect(hook.current.files[4]!.status).toBe('aborted')
    expect(uploader).toHaveBeenCalledTimes(4)
  })

  it("the caller's own signal aborts too", async () => {
    const { result: hook, calls } = renderUploads()
    const controller = new AbortController()
    let uploaded!: Promise<UploadResult>
    act(() => void (uploaded = handled(hook.current.uploadToS3(file(10), { signal: controller.signal }))))
    await act(async () => controller.abort())
    await expect(uploaded).rejects.toMatchObject({ name: 'AbortError' })
    expect(calls[0]!.options.signal!.aborted).toBe(true)
    expect(hook.current.files[0]!.status).toBe('aborted')
  })

  it('resetFiles empties the list, aborts nothing, and a later outcome does not bring the entry back', async () => {
    const { result: hook, calls } = renderUploads()
    let uploaded!: Promise<UploadResult>
    act(() => void (uploaded = handled(hook.current.uploadToS3(file(10)))))
    act(() => hook.current.resetFiles())
    expect(hook.current.files).toEqual([])
    expect(calls[0]!.options.signal!.aborted).toBe(false)
    await act(async () => calls[0]!.resolve(result))
    await expect(uploaded).resolves.toEqual(result)
    expect(hook.current.files).toEqual([])
  })

  // Regression (issue 11): while a request waited to be retried, the bar froze with no word why.
  it('shows an entry as retrying while the engine waits to try again, and uploading once bytes move past the mark', async () => {
    const onRetry = vi.fn()
    const { result: hook, calls } = renderUploads({ onRetry })
    act(() => void hook.current.uploadToS3(file(1000)).catch(() => {}))
    const { onProgress, onRetry: engineOnRetry } = calls[0]!.options
    act(() => onProgress!({ loaded: 400, total: 1000 }))
    const blip = new Error('Network error on PUT https://s3.test')
    act(() => engineOnRetry!({ attempt: 1, delay: 500, error: blip }))
    expect(hook.current.files[0]).toMatchObject({ status: 'retrying', uploaded: 400, error: blip })
    expect(onRetry).toHaveBeenCalledWith({ attempt: 1, delay: 500, error: blip })
    // The retried part resends bytes already counted: still retrying until it passes the mark.
    act(() => onProgress!({ loaded: 400, total: 1000 }))
    expect(hook.current.files[0]!.status).toBe('retrying')
    act(() => onProgress!({ loaded: 600, total: 1000 }))
    // Progress is throttled to one render per 100 ms: the last value lands after the interval.
    await act(() => new Promise((resolve) => setTimeout(resolve, 150)))
    expect(hook.current.files[0]).toMatchObject({ status: 'uploading', uploaded: 600, error: undefined })
  })

  it("maps next-s3-upload's endpoint.request, as api.request, onto engine options, over the hook's own", () => {
    const { result: hook, calls } = renderUploads({
      api: '/api/from-hook',
      apiBody: { album: 'a', from: 'hook' },
      apiHeaders: { 'x-hook': '1' },
    })
    act(() => {
      void hook.current.uploadToS3(file(10)).catch(() => {})
      void hook.current
        .uploadToS3(file(10), {
          api: { request: { url: '/api/other', body: { from: 'call' }, headers: new Headers({ 'X-Csrf': 't' }) } },
          retry: { limit: 4 },
        })
        .catch(() => {})
    })
    expect(calls[0]!.options).toMatchObject({
      api: '/api/from-hook',
      apiBody: { album: 'a', from: 'hook' },
      apiHeaders: { 'x-hook': '1' },
    })
    expect(calls[1]!.options).toMatchObject({
      api: '/api/other',
      apiBody: { album: 'a', from: 'call' },
      apiHeaders: { 'x-hook': '1', 'x-csrf': 't' },
      retry: { limit: 4 },
    })
  })

  it("hands next-s3-upload's old `endpoint` to the engine untouched, where upload() names it with its new name in development", () => {
    const { result: hook, calls } = renderUploads()
    const old = { request: { url: '/api/other' } }
    act(() => {
      void hook.current.uploadToS3(file(10), { endpoint: old } as never).catch(() => {})
    })
    // Not read as the upload API: the engine's warning (engine/core/option-names.ts) says `api`.
    expect(calls[0]!.options).toMatchObject({ endpoint: old })
    expect(calls[0]!.options.api).toBeUndefined()
  })

  it("names no strategy by default, so the engine's default applies (token mode, presigned where the API has no STS); the hook or a call can choose", () => {
    const { result: hook, calls } = renderUploads()
    act(() => {
      void hook.current.uploadToS3(file(10)).catch(() => {})
      void hook.current.uploadToS3(file(10), { strategy: 'token' }).catch(() => {})
    })
    expect(calls[0]!.options.strategy).toBeUndefined()
    expect(calls[1]!.options.strategy).toBe('token')

    const { result: tokenHook, calls: tokenCalls } = renderUploads({ strategy: 'token' })
    act(() => {
      void tokenHook.current.uploadToS3(file(10)).catch(() => {})
      void tokenHook.current.uploadToS3(file(10), { strategy: 'presigned' }).catch(() => {})
    })
    expect(tokenCalls.map((c) => c.options.strategy)).toEqual(['token', 'presigned'])
  })

  it('keeps uploadToS3, resetFiles, openFileDialog and FileInput stable across renders', () => {
    const { result: hook, rerender } = renderUploads()
    const first = hook.current
    rerender()
    expect(hook.current.uploadToS3).toBe(first.uploadToS3)
    expect(hook.current.resetFiles).toBe(first.resetFiles)
    expect(hook.current.openFileDialog).toBe(first.openFileDialog)
    expect(hook.current.FileInput).toBe(first.FileInput)
  })
})
