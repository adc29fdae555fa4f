import { describe, expect, it, vi } from 'vitest'
import { UploadAbortedError } from '../../engine/core/errors.ts'
import { isRunning, queuedEntry, refusedEntry, type UploadEntry, uploadListReducer } from '../../src/upload-list.ts'

const file = (size: number, name = 'a.bin') => new File([new Uint8Array(size)], name)
const result = { url: 'http://s3/b/k', bucket: 'b', key: 'k', etag: '"e"' }
const listed = (size = 1000) => [queuedEntry('1', file(size), vi.fn())]

describe('uploadListReducer', () => {
  it('adds an entry queued at 0% with its size', () => {
    const files = uploadListReducer([], { type: 'added', entry: queuedEntry('1', file(1000), () => {}) })
    expect(files).toMatchObject([{ id: '1', progress: 0, uploaded: 0, size: 1000, status: 'queued' }])
    expect(files[0]!.file.name).toBe('a.bin')
  })

  it('finished: what the server answered at /complete is on the entry as serverData', () => {
    const files = uploadListReducer(listed(), {
      type: 'finished',
      id: '1',
      result: { ...result, serverData: { photoId: 7 } },
    })
    expect(files[0]).toMatchObject({ status: 'done', serverData: { photoId: 7 } })
    expect(uploadListReducer(listed(), { type: 'finished', id: '1', result })[0]!.serverData).toBeUndefined()
  })

  it('progress moves a queued entry to uploading and sets bytes and percent', () => {
    const files = uploadListReducer(listed(1000), { type: 'progressed', id: '1', uploaded: 250 })
    expect(files[0]).toMatchObject({ status: 'uploading', uploaded: 250, progress: 25 })
  })

  it('never reports more bytes than the file has', () => {
    const files = uploadListReducer(listed(1000), { type: 'progressed', id: '1', uploaded: 5000 })
    expect(files[0]).toMatchObject({ uploaded: 1000, progress: 100 })
  })

  it('an empty file stays at 0% while uploading and ends at 100%', () => {
    let files = uploadListReducer(listed(0), { type: 'progressed', id: '1', uploaded: 0 })
    expect(files[0]).toMatchObject({ status: 'uploading', progress: 0 })
    files = uploadListReducer(files, { type: 'finished', id: '1', result })
    expect(files[0]).toMatchObject({ status: 'done', progress: 100, uploaded: 0 })
  })

  it('finished: done at 100% with the result, even without a final progress event', () => {
    let files = uploadListReducer(listed(1000), { type: 'progressed', id: '1', uploaded: 10 })
    files = uploadListReducer(files, { type: 'finished', id: '1', result })
    expect(files[0]).toMatchObject({ status: 'done', progress: 100, uploaded: 1000, result })
  })

  it('failed: error with the error kept, or aborted', () => {
    const error = new Error('File type not allowed')
    expect(uploadListReducer(listed(), { type: 'failed', id: '1', error, aborted: false })[0]).toMatchObject({
      status: 'error',
      error,
    })
    const aborted = uploadListReducer(listed(), {
      type: 'failed',
      id: '1',
      error: new UploadAbortedError(),
      aborted: true,
    })
    expect(aborted[0]).toMatchObject({ status: 'aborted', error: { name: 'AbortError', message: 'Upload aborted' } })
  })

  it('held: paused or waiting for the network until the engine runs again; progress and retries do not unpause it', () => {
    let files = uploadListReducer(listed(1000), { type: 'progressed', id: '1', uploaded: 300 })
    files = uploadListReducer(files, { type: 'held', id: '1', state: 'paused' })
    expect(files[0]).toMatchObject({ status: 'paused', uploaded: 300 })
    expect(isRunning(files[0]!)).toBe(true)
    files = uploadListReducer(files, { type: 'progressed', id: '1', uploaded: 300 })
    files = uploadListReducer(files, { type: 'retrying', id: '1', error: new Error('x') })
    expect(files[0]!.status).toBe('paused')
    files = uploadListReducer(files, { type: 'held', id: '1', state: 'waiting-for-network' })
    expect(files[0]!.status).toBe('waiting-for-network')
    files = uploadListReducer(files, { type: 'held', id: '1', state: 'running' })
    expect(files[0]).toMatchObject({ status: 'uploading', uploaded: 300 })
    // Held before any byte moved: back to queued.
    const fresh = uploadListReducer(uploadListReducer(listed(10), { type: 'held', id: '1', state: 'paused' }), {
      type: 'held',
      id: '1',
      state: 'running',
    })
    expect(fresh[0]!.status).toBe('queued')
  })

  it('retrying keeps the bar where it is and says why; bytes past the mark make it uploading again', () => {
    const error = new Error('Network error on PUT https://s3.test')
    let files = uploadListReducer(listed(1000), { type: 'progressed', id: '1', uploaded: 300 })
    files = uploadListReducer(files, { type: 'retrying', id: '1', error })
    expect(files[0]).toMatchObject({ status: 'retrying', uploaded: 300, progress: 30, error })
    files = uploadListReducer(files, { type: 'progressed', id: '1', uploaded: 300 })
    expect(files[0]!.status).toBe('retrying')
    files = uploadListReducer(files, { type: 'progressed', id: '1', uploaded: 301 })
    expect(files[0]).toMatchObject({ status: 'uploading', uploaded: 301, error: undefined })
    // A retrying upload can still end either way.
    files = uploadListReducer(files, { type: 'retrying', id: '1', error })
    expect(uploadListReducer(files, { type: 'finished', id: '1', result })[0]!.status).toBe('done')
  })

  it('an ended upload ignores late events: no progress, no second outcome', () => {
    const done = uploadListReducer(listed(), { type: 'finished', id: '1', result })
    expect(uploadListReducer(done, { type: 'progressed', id: '1', uploaded: 1 })).toBe(done)
    expect(uploadListReducer(done, { type: 'failed', id: '1', error: new Error('late'), aborted: false })).toBe(done)
    const failed = uploadListReducer(listed(), { type: 'failed', id: '1', error: new Error('x'), aborted: false })
    expect(uploadListReducer(failed, { type: 'finished', id: '1', result })).toBe(failed)
  })

  it('reset empties the list; events for entries no longer listed change nothing', () => {
    const files = uploadListReducer(listed(), { type: 'reset' })
    expect(files).toEqual([])
    expect(uploadListReducer(files, { type: 'progressed', id: '1', uploaded: 5 })).toBe(files)
    expect(uploadListReducer(files, { type: 'finished', id: '1', result })).toBe(files)
  })

  it('touches only the entry named and keeps the others as they were', () => {
    const two: UploadEntry[] = [queuedEntry('1', file(10), () => {}), queuedEntry('2', file(10), () => {})]
    const next = uploadListReducer(two, { type: 'progressed', id: '2', uploaded: 5 })
    expect(next[0]).toBe(two[0])
    expect(next[1]).toMatchObject({ id: '2', progress: 50 })
    expect(two[1]!.progress).toBe(0)
  })

  it('removed takes the entry off whatever its status; an unknown id changes nothing', () => {
    const two: UploadEntry[] = [queuedEntry('1', file(10), () => {}), queuedEntry('2', file(10), () => {})]
    expect(uploadListReducer(two, { type: 'removed', id: '1' }).map((entry) => entry.id)).toEqual(['2'])
    expect(uploadListReducer(two, { type: 'removed', id: 'gone' })).toBe(two)
    // A removed upload's late outcome does not bring it back.
    const removed = uploadListReducer(two, { type: 'removed', id: '1' })
    expect(uploadListReducer(removed, { type: 'finished', id: '1', result })).toBe(removed)
  })

  it('clearedEnded keeps running entries (queued, uploading) in order and drops done, failed, aborted and refused ones', () => {
    let files: UploadEntry[] = ['q', 'up', 'done', 'failed', 'aborted'].map((id) =>
      queuedEntry(id, file(10, id), () => {}),
    )
    files = uploadListReducer(files, { type: 'progressed', id: 'up', uploaded: 1 })
    files = uploadListReducer(files, { type: 'finished', id: 'done', result })
    files = uploadListReducer(files, { type: 'failed', id: 'failed', error: new Error('x'), aborted: false })
    files = uploadListReducer(files, { type: 'failed', id: 'aborted', error: new UploadAbortedError(), aborted: true })
    files = uploadListReducer(files, { type: 'added', entry: refusedEntry('refused', file(10), new Error('too big')) })
    const cleared = uploadListReducer(files, { type: 'clearedEnded' })
    expect(cleared.map((entry) => [entry.id, entry.status])).toEqual([
      ['q', 'queued'],
      ['up', 'uploading'],
    ])
    expect(uploadListReducer(cleared, { type: 'clearedEnded' })).toBe(cleared)
  })

  it('a refused entry is ended from the start, at 0%, with its reason, and ignores engine events', () => {
    const reason = new Error('over the limit')
    const files = [refusedEntry('r', file(5000), reason)]
    expect(files[0]).toMatchObject({ status: 'error', error: reason, progress: 0, uploaded: 0, size: 5000 })
    expect(isRunning(files[0]!)).toBe(false)
    expect(uploadListReducer(files, { type: 'progressed', id: 'r', uploaded: 10 })).toBe(files)
  })
})
