import { useCallback, useEffect, useLayoutEffect, useRef, useState } from 'react'
import type { UploadOptions, UploadResult } from '../../engine/index.ts'
// upload()'s own module, not the engine's entry: the entry reaches resume, which this entry loads
// lazily with the local copy (kept-copy.ts); esbuild would put it in the page's chunks.
import { upload } from '../../engine/upload.ts'
import { callBack } from '../call-back.ts'
import { useLeaveWarning } from '../leave-warning.ts'
import type { LocalCopy } from './kept-copy.ts'
import { openSource, type RecordingSource, recordingName } from './media-source.ts'
import { type RecordingEnd, type RecordingOptions, recordToStream } from './recorder-stream.ts'

/** The local copy's code (kept-copy.ts), loaded when a recording starts or the hook mounts where the browser can keep one. */
const keeping = () => import('./kept-copy.ts')
/** The browser has an origin-private file system (its `createWritable` is tried when a copy starts). */
const canKeep = () => typeof globalThis.navigator?.storage?.getDirectory === 'function'

/**
 * A recording an earlier visit left unfinished (the tab closed mid-recording, the browser
 * crashed, the upload failed), kept in this browser: `finish()` uploads it, `discard()` drops it.
 */
export interface UnfinishedRecording {
  /** Its copy's name in the origin-private file system (and of its upload's resume record). */
  id: string
  /** The file name it is stored under. */
  name: string
  /** Its type, without codecs (`video/webm`). */
  type: string
  /** Bytes kept: the recording up to its last chunk written (see docs/recording.md for what may be missing). */
  size: number
  /** When recording began, ms since the epoch. */
  startedAt: number
}

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
      | 'signal'
      | 'onProgress'
      | 'pauseSignal'
      | 'size'
      | 'filename'
      | 'contentType'
      | 'resume'
      | 'fileHandle'
      | 'fingerprint'
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
  /**
   * Keep a copy of the recording in the browser's origin-private file system while it is recorded
   * and sent, so a page closed mid-recording can be finished on the next visit (`unfinished`). It
   * takes the recording's size on disk, within the browser's quota for the site, until the upload
   * is stored and verified (or cancelled, or discarded). Where the browser has no such file system
   * (older browsers, some private windows), the recording goes on without a copy. @default true
   */
  keepLocalCopy?: boolean
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
  /**
   * Recordings an earlier visit left unfinished, kept in this browser (found when the hook
   * mounts; a recording of this page whose upload failed joins them), oldest first. Empty with
   * `keepLocalCopy: false` or where the browser keeps no copy.
   */
  unfinished: UnfinishedRecording[]
  /**
   * Uploads an unfinished recording from its copy: the parts already on storage are not sent
   * again (through the engine's resume: the server needs `resumable: true`, else the whole copy is
   * sent), then the copy is deleted. Status `finishing`, then `done` (or `failed`: the copy is
   * kept). Resolves with the stored object, or undefined; never rejects. A recording another tab
   * is finishing, or whose copy is gone, leaves `unfinished` (status back to `idle`). Ignored while
   * a recording runs.
   */
  finish(recording: UnfinishedRecording): Promise<UploadResult | undefined>
  /** Drops an unfinished recording: its upload aborted on storage (the parts sent removed), its copy deleted. Never rejects (`error` says why it could not). */
  discard(recording: UnfinishedRecording): Promise<void>
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
  const [unfinished, setUnfinished] = useState<UnfinishedRecording[]>([])
  const findUnfinished = useCallback(async () => {
    if (latest.current.keepLocalCopy === false || !canKeep()) return
    const found = await (await keeping()).listKept().catch(() => [])
    if (mounted.current) setUnfinished(found)
  }, [])
  useEffect(() => {
    void findUnfinished().catch(() => {})
  }, [findUnfinished])
  const drop = useCallback(
    (recording: UnfinishedRecording) => setUnfinished((list) => list.filter(({ id }) => id !== recording.id)),
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
        mimeType,
        timeslice,
        videoBitsPerSecond,
        audioBitsPerSecond,
        onChunk,
      } = latest.current
      const engineOptions = engineOptionsOf(latest.current)
      const keepCopy = latest.current.keepLocalCopy !== false && canKeep()
      const controller = new AbortController()
      let copying: Promise<LocalCopy | undefined> = Promise.resolve(undefined)
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
          // The first chunk comes a timeslice after the start, well after the copy is open.
          keep: async (chunk) => (await copying)?.keep(chunk),
        })
        clock.current.since = performance.now()
        update({ status: 'recording', media: opened.media })
        const name = filename ?? recordingName(recorder.mimeType, new Date())
        // The essence: storage and the API's type check take `video/webm`, not its codecs.
        const contentType = recorder.mimeType.split(';')[0]!.trim()
        if (keepCopy)
          copying = keeping()
            .then(({ startCopy }) => startCopy(name, contentType))
            .catch(() => undefined)
        const copy = await copying
        const ending = recorder.ended.then(({ end, error }) => {
          clockStop()
          update({ endedBy: end, ...(error && { error }), ...(!cancelled && !settled && { status: 'finishing' }) })
        })
        const result = await upload(recorder.stream, {
          ...engineOptions,
          filename: name,
          contentType,
          // With a copy, the upload is recorded under the copy's id: the next visit carries it on from the copy.
          ...copy?.journal,
          signal: controller.signal,
          onProgress: ({ loaded }) => update({ sentBytes: loaded }),
        })
        settled = true
        await ending
        await copy?.discard()
        update({ status: 'done', result })
        callBack(onUploaded, result)
        return result
      } catch (error) {
        settled = true
        recorder?.stop()
        // Every chunk is written once the recorder has ended: then the copy is whole.
        await recorder?.ended
        const copy = await copying
        if (!cancelled && !controller.signal.aborted) {
          update({ status: 'failed', error: error instanceof Error ? error : new Error(String(error)) })
          // Kept: the recording is offered to finish later, with Discard.
          copy?.release()
          void findUnfinished()
        } else {
          await copy?.discard()
          update({ status: 'cancelled' })
        }
        return undefined
      } finally {
        clockStop()
        for (const track of owned?.getTracks() ?? []) track.stop()
        update({ media: undefined })
        run.current = undefined
      }
    },
    [update, clockStop, findUnfinished],
  )

  const finish = useCallback(
    async (recording: UnfinishedRecording): Promise<UploadResult | undefined> => {
      if (run.current) return undefined
      const controller = new AbortController()
      run.current = { stop() {}, pause() {}, resume() {}, cancel: () => controller.abort() }
      setElapsedMs(0)
      update({ ...IDLE, status: 'finishing', recordedBytes: recording.size })
      try {
        const result = await (await keeping()).finishKept(recording, {
          ...engineOptionsOf(latest.current),
          signal: controller.signal,
          onProgress: ({ loaded }) => update({ sentBytes: loaded }),
        })
        // Stored, or another tab holds it (and finishes it), or its copy is gone: no longer this tab's to offer.
        drop(recording)
        update(result ? { status: 'done', result } : IDLE)
        if (result) callBack(latest.current.onUploaded, result)
        return result
      } catch (error) {
        if (controller.signal.aborted) update({ status: 'cancelled' })
        else update({ status: 'failed', error: error instanceof Error ? error : new Error(String(error)) })
        return undefined
      } finally {
        run.current = undefined
      }
    },
    [update, drop],
  )

  const discard = useCallback(
    async (recording: UnfinishedRecording) => {
      try {
        const { transport, apiHeaders } = latest.current
        await (await keeping()).discardKept(recording.id, { transport, apiHeaders })
        drop(recording)
      } catch (error) {
        update({ error: error instanceof Error ? error : new Error(String(error)) })
      }
    },
    [update, drop],
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
    unfinished,
    finish,
    discard,
  }
}

/** The engine's options of the hook's: what is not about recording. */
function engineOptionsOf(options: UseRecordingUploadOptions): UploadOptions {
  const {
    source: _source,
    filename: _filename,
    onUploaded: _onUploaded,
    warnBeforeLeaving: _warn,
    keepLocalCopy: _keep,
    mimeType: _mimeType,
    timeslice: _timeslice,
    videoBitsPerSecond: _video,
    audioBitsPerSecond: _audio,
    onChunk: _onChunk,
    ...engineOptions
  } = options
  return engineOptions
}
