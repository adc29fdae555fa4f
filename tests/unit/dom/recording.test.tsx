// The recording entry's parts that need no media (the recording itself is tested in real Chromium and
// Firefox ESR: tests/recording-browsers.test.ts): refusals typed and worded, names, the clock's
// format, and a hook that fails without rejecting where the browser cannot record (jsdom has no
// MediaRecorder and no mediaDevices, as an insecure page has none).
import { act, cleanup, render, renderHook, screen } from '@testing-library/react'
import { afterEach, describe, expect, it } from 'vitest'
import { captureRefused, RecordingError } from '../../../src/recording/errors.ts'
import { openSource, recordingName } from '../../../src/recording/media-source.ts'
import { formatElapsed, RecordButton } from '../../../src/recording/RecordButton.tsx'
import { recordToStream } from '../../../src/recording/recorder-stream.ts'
import { useRecordingUpload } from '../../../src/recording/useRecordingUpload.ts'

afterEach(cleanup)

const refusal = (name: string) => Object.assign(new Error(`${name} from the browser`), { name })

describe('recording refusals', () => {
  it.each([
    ['NotAllowedError', false, 'denied', /allow it in the browser's site settings/],
    ['NotAllowedError', true, 'denied', /Screen sharing was refused or cancelled/],
    ['NotFoundError', false, 'no-device', /No camera or microphone was found/],
    ['OverconstrainedError', false, 'no-device', /No camera or microphone/],
    ['NotReadableError', false, 'no-device', /close other apps using it/],
    ['TypeError', false, 'unsupported', /open it over https/],
  ] as const)(
    '%s (screen: %s) is a RecordingError %s, one sentence saying what to do',
    (name, screenShare, reason, words) => {
      const error = captureRefused(refusal(name), screenShare)
      expect(error).toBeInstanceOf(RecordingError)
      expect(error.name).toBe('RecordingError')
      expect(error.reason).toBe(reason)
      expect(error.message).toMatch(words)
      expect((error.cause as Error).name).toBe(name)
    },
  )

  it('a page without mediaDevices (insecure, or jsdom) cannot open a camera: unsupported, before asking', async () => {
    await expect(openSource('camera')).rejects.toMatchObject({ name: 'RecordingError', reason: 'unsupported' })
    await expect(openSource('screen')).rejects.toThrow(/cannot share the screen/)
  })

  it('a browser without MediaRecorder cannot record: unsupported', () => {
    expect(() => recordToStream(new EventTarget() as MediaStream)).toThrow(RecordingError)
  })
})

describe('names and clock', () => {
  it('names a recording after its type and start', () => {
    const at = new Date('2026-11-28T01:20:03.456Z')
    expect(recordingName('video/webm;codecs=vp8,opus', at)).toBe('recording-2026-11-28T01-20-03.webm')
    expect(recordingName('video/mp4', at)).toBe('recording-2026-11-28T01-20-03.mp4')
    expect(recordingName('audio/ogg', at)).toBe('recording-2026-11-28T01-20-03.ogg')
  })

  it.each([
    [0, '0:00'],
    [7_999, '0:07'],
    [754_000, '12:34'],
    [3_723_000, '1:02:03'],
  ])('%i ms reads %s', (ms, text) => expect(formatElapsed(ms)).toBe(text))
})

describe('useRecordingUpload where the browser cannot record', () => {
  it('start() resolves undefined (never rejects), status failed with the typed error; the camera is never asked', async () => {
    const { result } = renderHook(() => useRecordingUpload({ api: '/api/s3-upload' }))
    let outcome: unknown = 'pending'
    await act(async () => {
      outcome = await result.current.start()
    })
    expect(outcome).toBeUndefined()
    expect(result.current.status).toBe('failed')
    expect(result.current.error).toMatchObject({ name: 'RecordingError', reason: 'unsupported' })
    expect(result.current.recordedBytes).toBe(0)
  })

  it('<RecordButton> says why in an alert, and offers to start again', async () => {
    render(<RecordButton source="microphone" />)
    const start = screen.getByRole('button', { name: 'Record audio' })
    await act(async () => start.click())
    expect(screen.getByRole('alert').textContent).toMatch(/cannot use the camera or microphone/)
    expect(screen.getByRole('button', { name: 'Record audio' })).toBeTruthy()
    expect(document.querySelector('.updraft-record')!.getAttribute('data-state')).toBe('failed')
  })
})

describe('useRecordingUpload where the browser keeps no copy (jsdom has no origin-private file system)', () => {
  it('offers nothing unfinished, and finish() of a recording whose copy is not there settles undefined, idle', async () => {
    expect((navigator as Partial<Navigator>).storage?.getDirectory).toBeUndefined()
    const { result } = renderHook(() => useRecordingUpload({ api: '/api/s3-upload' }))
    await act(async () => {})
    expect(result.current.unfinished).toEqual([])
    let outcome: unknown = 'pending'
    await act(async () => {
      outcome = await result.current.finish({ id: 'x', name: 'r.webm', type: 'video/webm', size: 1, startedAt: 0 })
    })
    expect(outcome).toBeUndefined()
    expect(result.current.status).toBe('idle')
    expect(result.current.error).toBeUndefined()
  })
})
