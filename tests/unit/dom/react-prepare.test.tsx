// The hooks' `prepare` (src/prepare.ts): the prepared file is what the engine gets, announced by
// its own name, type and size; the list's check judges it, not the picked one; a preparer that
// throws, gives no File or never settles ends its entry, with a PrepareError or on abort, and
// nothing is sent. The engine is a stand-in here; images-browser.test.ts runs the real one.
import { act, cleanup, renderHook } from '@testing-library/react'
import { afterEach, describe, expect, it } from 'vitest'
import { createQueue } from '../../../engine/transport/queue.ts'
import { checkFile, FileRefusedError } from '../../../src/file-checks.ts'
import { errorMessage, isFinal } from '../../../src/messages.ts'
import { PrepareError } from '../../../src/prepare.ts'
import type { UseS3UploadOptions } from '../../../src/upload-options.ts'
import { useS3Upload } from '../../../src/useS3Upload.ts'
import { stubUploader } from '../../helpers/stub-uploader.ts'

afterEach(cleanup)

const result = { url: 'http://127.0.0.1:9000/uploads/k', bucket: 'uploads', key: 'k', etag: '"e"' }
const file = (size: number, name: string, type = 'image/png') =>
  new File([new Uint8Array(size)], name, { type, lastModified: 1234 })

function renderUploads(extra: UseS3UploadOptions = {}) {
  const stub = stubUploader()
  const rendered = renderHook(() => useS3Upload({ queue: createQueue(4), ...extra }), { wrapper: stub.wrapper })
  return { ...stub, hook: rendered.result }
}

/** Lets the awaits of the hook's upload run. */
const settle = () => act(async () => {})

describe('prepare', () => {
  it('the engine gets the prepared file; the entry keeps the picked one, its size becomes what is sent; a folder path takes the new name', async () => {
    const smaller = file(300, 'a.webp', 'image/webp')
    const { hook, calls } = renderUploads({ prepare: async () => smaller })
    const picked = file(5000, 'a.png')
    Object.defineProperty(picked, 'webkitRelativePath', { value: 'trip/a.png' })
    let outcomes!: Promise<PromiseSettledResult<unknown>[]>
    act(() => void (outcomes = hook.current.addFiles([picked])))
    expect(hook.current.files[0]).toMatchObject({ status: 'preparing', size: 5000 })
    await settle()
    expect(calls).toHaveLength(1)
    expect(hook.current.files[0]!.status).toBe('queued')
    expect(calls[0]!.file).toBe(smaller)
    expect(calls[0]!.options.filename).toBe('trip/a.webp')
    expect(hook.current.files[0]!.file).toBe(picked)
    expect(hook.current.files[0]!.size).toBe(300)
    act(() => calls[0]!.options.onProgress!({ loaded: 150, total: 300 }))
    expect(hook.current.files[0]).toMatchObject({ progress: 50, uploaded: 150 })
    await act(async () => calls[0]!.resolve(result))
    expect((await outcomes)[0]!.status).toBe('fulfilled')
    expect(hook.current.files[0]).toMatchObject({ status: 'done', progress: 100, uploaded: 300 })
  })

  it('the check judges the prepared file: a picked file over the limit goes once prepared under it, and one still over is refused', async () => {
    const limit = (f: File) => checkFile(f, { maxFileSize: 1000 })
    const { hook, calls } = renderUploads({
      check: limit,
      prepare: (f) => (f.name === 'fits.png' ? file(900, f.name) : file(2000, f.name)),
    })
    let outcomes!: Promise<PromiseSettledResult<unknown>[]>
    act(() => void (outcomes = hook.current.addFiles([file(5000, 'fits.png'), file(5000, 'still-big.png')])))
    await settle()
    expect(calls.map((c) => [c.file.name, c.file.size])).toEqual([['fits.png', 900]])
    const refused = hook.current.files[1]!
    expect(refused.status).toBe('error')
    expect(refused.error).toBeInstanceOf(FileRefusedError)
    expect((refused.error as FileRefusedError).refusal).toMatchObject({
      reason: 'too-large',
      size: 2000,
      maxFileSize: 1000,
    })
    await act(async () => calls[0]!.resolve(result))
    expect((await outcomes).map((o) => o.status)).toEqual(['fulfilled', 'rejected'])
  })

  it('without prepare, the check still judges the picked file before the entry is queued', () => {
    const { hook, uploader } = renderUploads({ check: (f) => checkFile(f, { maxFileSize: 1000 }) })
    act(() => void hook.current.addFiles([file(5000, 'big.png')]).catch(() => {}))
    expect(uploader).not.toHaveBeenCalled()
    expect(hook.current.files[0]).toMatchObject({ status: 'error', id: expect.stringMatching(/^refused-/) })
  })

  it('a preparer that throws ends the entry with a PrepareError saying what to change; nothing is sent, and no Retry is offered', async () => {
    const cause = new Error('canvas exploded')
    const { hook, uploader } = renderUploads({ prepare: () => Promise.reject(cause) })
    let uploaded!: Promise<unknown>
    act(() => void (uploaded = hook.current.uploadToS3(file(5000, 'a.png')).catch((error: unknown) => error)))
    let error!: PrepareError
    await act(async () => void (error = (await uploaded) as PrepareError))
    expect(error).toBeInstanceOf(PrepareError)
    expect(error).toMatchObject({ name: 'PrepareError', cause })
    expect(error.file.name).toBe('a.png')
    expect(error.message).toBe(
      "a.png could not be prepared for upload (canvas exploded): fix the hook's prepare, or leave it out to send files as picked",
    )
    expect(uploader).not.toHaveBeenCalled()
    expect(hook.current.files[0]).toMatchObject({ status: 'error', error })
    expect(errorMessage(error)).toBe(
      "This site could not prepare this file for upload — nothing was sent; retrying won't help",
    )
    expect(isFinal(error)).toBe(true)
  })

  it('a preparer that throws synchronously, or gives no File, ends the entry the same way', async () => {
    for (const prepare of [
      () => {
        throw new TypeError('bad')
      },
      () => undefined as unknown as File,
      async () => new Blob(['x']) as File,
    ]) {
      const { hook, uploader } = renderUploads({ prepare })
      let uploaded!: Promise<unknown>
      act(() => void (uploaded = hook.current.uploadToS3(file(10, 'a.png')).catch((error: unknown) => error)))
      const error = (await uploaded) as PrepareError
      expect(error).toBeInstanceOf(PrepareError)
      expect(error.message).toMatch(
        /^a\.png could not be prepared for upload \((bad|it gave (undefined|object), not a File)\)/,
      )
      expect(uploader).not.toHaveBeenCalled()
      cleanup()
    }
  })

  it('a preparer that never settles cannot hold the row: abort() ends it at once as aborted', async () => {
    const { hook, uploader } = renderUploads({ prepare: () => new Promise<File>(() => {}) })
    let uploaded!: Promise<unknown>
    act(() => void (uploaded = hook.current.uploadToS3(file(10, 'a.png')).catch((error: unknown) => error)))
    await settle()
    expect(hook.current.files[0]!.status).toBe('preparing')
    await act(async () => hook.current.files[0]!.abort())
    expect(await uploaded).toMatchObject({ name: 'AbortError', message: 'Upload aborted' })
    expect(hook.current.files[0]!.status).toBe('aborted')
    expect(uploader).not.toHaveBeenCalled()
  })

  it('a preparer that gives the picked file back sends it as it is', async () => {
    const { hook, calls } = renderUploads({ prepare: (f) => f })
    const picked = file(10, 'a.png')
    act(() => void hook.current.uploadToS3(picked).catch(() => {}))
    await settle()
    expect(calls[0]!.file).toBe(picked)
    expect(calls[0]!.options.filename).toBeUndefined()
    expect(hook.current.files[0]!.size).toBe(10)
  })
})
