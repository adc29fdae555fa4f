import { useCallback, useEffect, useLayoutEffect, useRef, useState } from 'react'
import { type UploadOptions, type UploadResult, upload } from '../../engine/index.ts'
import { callBack } from '../call-back.ts'
import { useLeaveWarning } from '../leave-warning.ts'
import { openSource, type RecordingSource, recordingName } from './media-source.ts'
import { type RecordingEnd, type RecordingOptions, recordToStream } from './recorder-stream.ts'

/** Where a recording is: `finishing` is recorded and still sending its last part and `/complete`. */
export type RecordingStatus =
  | 'idle'
  | 'starting'
  | 'recording'
  | 'paused'
  | 'finishing'
  | 'done'
  | 'failed'
  | 'cancelled'

/** {@link useRecordingUpload}'s options: any engine option, how to record, and what to call the file. */
export interface UseRecordingUploadOptions
  extends Omit<
      UploadOptions,
      'signal' | 'onProgress' | 'pauseSignal' | 'size' | 'filename' | 'contentType' | 'resume' | 'fileHandle'
    >,
    RecordingOptions {
  /** What `start()` records when it is given nothing. @default 'camera' (with the microphone) */
  source?: RecordingSource
  /** The file name the API builds the key from. @default `recording-{ISO time}.webm` (`.mp4`, `.ogg` by type) */
  filename?: string
  /** Told once the recording is stored and the API verified it. */
  onUploaded?: (result: UploadResult) => void
  /** Ask before the page is left while a recording runs or sends (what is lost then: docs/recording.md). @default true */
  warnBeforeLeaving?: boolean
}

/** A recording as it goes: state, figures and controls. */
export interface RecordingUpload {
  /** Where the recording is; `done` once stored and verified by the API. */
  status: RecordingStatus
  /**
   * Starts recording `source` (else the `source` option) and uploading it as it is recorded.
   * Resolves with the stored object once it is stored, or undefined when the recording failed
   * (`error` says why) or was cancelled; never rejects. Ignored while a recording runs.
   */
  start(source?: RecordingSource): Promise<UploadResult | undefined>
  /** Ends the recording; the upload sends what is left and completes (`finishing`, then `done`). */
  stop(): void
  /** Pauses the recording, not the upload: parts already recorded keep going out. */
  pause(): void
  /** Records on after `pause()`, into the same file. */
  resume(): void
  /** Ends the recording and aborts its upload: nothing is stored, the parts sent are removed. */
  cancel(): void
  /** Time spent recording, pauses left out, in ms. */
  elapsedMs: number
  /** Bytes the recorder has given so far. */
  recordedBytes: number
  /** Bytes storage has received so far. */
  sentBytes: number
  /** The stream being recorded, for a live preview (`video.srcObject`); undefined when none runs. */
  media: MediaStream | undefined
  /** How the last recording ended: Stop, a track ended (screen sharing stopped, a permission revoked), or the recorder failing. */
  endedBy: RecordingEnd | undefined
  /** The stored object, once `done`. */
  result: UploadResult | undefined
  /** Why the last recording failed: a `RecordingError`, or the engine's upload error (`ApiError`, `S3Error`…). */
  error: Error | undefined
}

interface Figures {
  status: RecordingStatus
  recordedBytes: number
  sentBytes: number
  media?: MediaStream
  endedBy?: RecordingEnd
  result?: UploadResult
  error?: Error
}

/** A run's controls: what the buttons act on while it records. */
interface Run {
  stop(): void
  pause(): void
  resume(): void
  cancel(): void
}

const IDLE: Figures = { status: 'idle', recordedBytes: 0, sentBytes: 0 }

/**
 * Records the camera, the microphone, the screen or a given `MediaStream` with `MediaRecorder` and
 * uploads the recording while it is being made: the recorder's chunks (every `timeslice`, 1 s by
 * default) feed the engine as a stream of unknown length, which sends each part as soon as it
 * is full (5 MiB, all equal but the last). Stop ends the recording; the upload then sends the last
 * part and completes, about one part's transfer after Stop. A track that ends (the browser's "Stop
 * sharing", a revoked permission) ends the recording the same way; what was recorded is stored.
 * A recording of one part or less goes as one PUT. See docs/recording.md.
 * @example
 * ```tsx
 * import { useRecordingUpload } from 'updraft-s3/react/recording'
 *
 * function Recorder() {
 *   const recording = useRecordingUpload({ source: 'screen', strategy: 'presigned' })
 *   return recording.status === 'recording'
 *     ? <button onClick={recording.stop}>Stop ({Math.round(recording.elapsedMs / 1000)} s)</button>
 *     : <button onClick={() => void recording.start()}>Record the screen</button>
 * }
 * ```
 */
export function useRecordingUpload(options: UseRecordingUploadOptions = {}): RecordingUpload {
  const [figures, setFigures] = useState<Figures>(IDLE)
  const [elapsedMs, setElapsedMs] = useState(0)
  const latest = useRef(options)
  useLayoutEffect(() => {
    latest.current = options
  })
  const run = useRef<Run | undefined>(undefined)
  // Recording time: what earlier stretches added up to, and when the current one began.
  const clock = useRef({ before: 0, since: undefined as number | undefined })
  const mounted = useRef(true)
  useEffect(() => {
    mounted.current = true
    return () => {
      mounted.current = false
      run.current?.cancel()
    }
  }, [])
  const update = useCallback(
    (change: Partial<Figures>) => mounted.current && setFigures((now) => ({ ...now, ...change })),
    [],
  )

  const running = figures.status === 'recording'
  useEffect(() => {
    if (!running) return
    const tick = setInterval(
      () => setElapsedMs(clock.current.before + (performance.now() - (clock.current.since ?? performance.now()))),
      250,
    )
    return () => clearInterval(tick)
  }, [running])
  const clockStop = useCallback(() => {
    const { before, since } = clock.current
    if (since !== undefined) clock.current = { before: before + performance.now() - since, since: undefined }
    setElapsedMs(clock.current.before)
  }, [])

  const start = useCallback(
    async (given?: RecordingSource): Promise<UploadResult | undefined> => {
      if (run.current) return undefined
      const {
        source = 'camera',
        filename,
        onUploaded,
        warnBeforeLeaving: _warn,
        mimeType,
        timeslice,
        videoBitsPerSecond,
        audioBitsPerSecond,
        onChunk,
        ...engineOptions
      } = latest.current
      const controller = new AbortController()
      let recorder: ReturnType<typeof recordToStream> | undefined
      let cancelled = false
      // Set once the upload has settled: the recorder's end, which may come later, changes no status then.
      let settled = false
      run.current = {
        stop: () => recorder?.stop(),
        pause() {
          if (!recorder) return
          recorder.pause()
          clockStop()
          update({ status: 'paused' })
        },
        resume() {
          if (!recorder) return
          recorder.resume()
          clock.current.since = performance.now()
          update({ status: 'recording' })
        },
        cancel() {
          cancelled = true
          recorder?.stop()
          controller.abort()
        },
      }
      clock.current = { before: 0, since: undefined }
      setElapsedMs(0)
      update({ ...IDLE, status: 'starting' })
      let owned: MediaStream | undefined
      try {
        const opened = await openSource(given ?? source)
        if (opened.owned) owned = opened.media
        if (cancelled) throw controller.signal.reason
        recorder = recordToStream(opened.media, {
          mimeType,
          timeslice,
          videoBitsPerSecond,
          audioBitsPerSecond,
          onChunk,
          onRecorded: (recordedBytes) => update({ recordedBytes }),
        })
        clock.current.since = performance.now()
        update({ status: 'recording', media: opened.media })
        const stored = recorder.stream
        const ending = recorder.ended.then(({ end, error }) => {
          clockStop()
          update({ endedBy: end, ...(error && { error }), ...(!cancelled && !settled && { status: 'finishing' }) })
        })
        const result = await upload(stored, {
          ...engineOptions,
          filename: filename ?? recordingName(recorder.mimeType, new Date()),
          // The essence: storage and the API's type check take `video/webm`, not its codecs.
          contentType: recorder.mimeType.split(';')[0]!.trim(),
          signal: controller.signal,
          onProgress: ({ loaded }) => update({ sentBytes: loaded }),
        })
        settled = true
        await ending
        update({ status: 'done', result })
        callBack(onUploaded, result)
        return result
      } catch (error) {
        settled = true
        recorder?.stop()
        if (!cancelled && !controller.signal.aborted)
          update({ status: 'failed', error: error instanceof Error ? error : new Error(String(error)) })
        else update({ status: 'cancelled' })
        return undefined
      } finally {
        clockStop()
        for (const track of owned?.getTracks() ?? []) track.stop()
        update({ media: undefined })
        run.current = undefined
      }
    },
    [update, clockStop],
  )

  const stop = useCallback(() => run.current?.stop(), [])
  const pause = useCallback(() => run.current?.pause(), [])
  const resume = useCallback(() => run.current?.resume(), [])
  const cancel = useCallback(() => run.current?.cancel(), [])

  const active = ['starting', 'recording', 'paused', 'finishing'].includes(figures.status)
  useLeaveWarning(options.warnBeforeLeaving !== false && active)

  const { status, recordedBytes, sentBytes, media, endedBy, result, error } = figures
  return {
    status,
    recordedBytes,
    sentBytes,
    media,
    endedBy,
    result,
    error,
    elapsedMs,
    start,
    stop,
    pause,
    resume,
    cancel,
  }
}
