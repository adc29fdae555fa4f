import { RecordingError } from './errors.ts'

/** How a recording ended: the Stop button (`stop()`), a track the browser or the person ended, or the recorder failing. */
export type RecordingEnd = 'stopped' | 'track-ended' | 'recorder-failed'

/** How to record: MediaRecorder's own options, and how often it hands over what it has. */
export interface RecordingOptions {
  /** A type `MediaRecorder.isTypeSupported()` accepts. @default the first of WebM, then MP4, the browser can record for the stream's tracks */
  mimeType?: string
  /** How often the recorder hands over what it has, in ms: the longest a recorded byte waits before it can be sent. @default 1000 */
  timeslice?: number
  /** The video bitrate MediaRecorder aims at (it decides the bytes per minute: 2.5 Mbit/s is ~19 MB a minute). @default the browser's */
  videoBitsPerSecond?: number
  /** The audio bitrate MediaRecorder aims at. @default the browser's */
  audioBitsPerSecond?: number
  /** Each chunk as the recorder gives it, in order (a local copy, a preview): the stored object is these chunks, concatenated. */
  onChunk?: (chunk: Blob) => void
}

export interface RecorderStreamOptions extends RecordingOptions {
  /** Bytes recorded so far, after each chunk. */
  onRecorded?: (bytes: number) => void
  /**
   * Keeps each chunk (the local copy, kept-copy.ts) before it enters `stream`, so no byte leaves
   * for storage that the copy lacks; must not reject. Chunks recorded after the upload stopped
   * reading are kept too: the copy is the whole recording.
   */
  keep?: (chunk: Blob) => Promise<void>
}

/** A MediaRecorder whose chunks come out of `stream`, in order, as they are recorded. */
export interface RecorderStream {
  /** The recording's bytes; it closes once the recorder has given its last chunk. */
  stream: ReadableStream<Uint8Array>
  /** What the recorder records: `video/webm;codecs=vp8,opus`… */
  mimeType: string
  /** Ends the recording: the recorder flushes its last chunk, then `stream` closes. */
  stop(): void
  pause(): void
  resume(): void
  /** Settles once `stream` has closed (every chunk is in it): how the recording ended, and the recorder's error if it failed. */
  ended: Promise<{ end: RecordingEnd; error?: RecordingError }>
}

const VIDEO_TYPES = ['video/webm;codecs=vp8,opus', 'video/webm', 'video/mp4']
const AUDIO_TYPES = ['audio/webm;codecs=opus', 'audio/webm', 'audio/ogg', 'audio/mp4']

/**
 * Records `media` with a MediaRecorder, its chunks (every `timeslice` ms) enqueued in `stream` in
 * the order recorded. A track that ends (the browser's "Stop sharing", a permission revoked, a
 * device unplugged) ends the recording as `stop()` does: what was recorded is kept. A stream the
 * reader cancels (the upload failed or was aborted) stops the recorder too.
 * @throws {@link RecordingError} `unsupported`: no MediaRecorder, or not the `mimeType` asked for.
 */
export function recordToStream(media: MediaStream, options: RecorderStreamOptions = {}): RecorderStream {
  const { timeslice = 1000, videoBitsPerSecond, audioBitsPerSecond, onChunk, onRecorded, keep } = options
  if (typeof MediaRecorder === 'undefined') {
    throw new RecordingError(
      'unsupported',
      'This browser cannot record (it has no MediaRecorder): use a current Chrome, Edge, Firefox or Safari',
    )
  }
  const mimeType =
    options.mimeType ??
    (media.getVideoTracks().length ? VIDEO_TYPES : AUDIO_TYPES).find((type) => MediaRecorder.isTypeSupported(type))
  if (mimeType !== undefined && !MediaRecorder.isTypeSupported(mimeType)) {
    throw new RecordingError(
      'unsupported',
      `This browser cannot record ${mimeType}: leave mimeType out, or choose one MediaRecorder.isTypeSupported() accepts`,
    )
  }
  const recorder = new MediaRecorder(media, { mimeType, videoBitsPerSecond, audioBitsPerSecond })

  let end: RecordingEnd = 'stopped'
  let failure: RecordingError | undefined
  let recorded = 0
  // Blob.arrayBuffer() settles in any order: chained, so chunks enter the stream as recorded.
  let queue = Promise.resolve()
  let closed = false
  let resolveEnded!: (value: { end: RecordingEnd; error?: RecordingError }) => void
  const ended = new Promise<{ end: RecordingEnd; error?: RecordingError }>((resolve) => (resolveEnded = resolve))

  const stop = (why: RecordingEnd = 'stopped') => {
    if (recorder.state === 'inactive') return
    end = why
    recorder.stop()
  }
  const onTrackEnded = () => stop('track-ended')
  const tracks = media.getTracks()
  for (const track of tracks) track.addEventListener('ended', onTrackEnded)
  // A track the page itself stopped (track.stop()) fires no `ended`, and Firefox's recorder then
  // gives no more chunks: looked for every timeslice.
  const watch = setInterval(
    () => tracks.some((track) => track.readyState === 'ended') && stop('track-ended'),
    timeslice,
  )

  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      recorder.addEventListener('dataavailable', ({ data }) => {
        if (!data.size) return
        onChunk?.(data)
        queue = queue
          .then(async () => {
            await keep?.(data)
            const chunk = new Uint8Array(await data.arrayBuffer())
            if (closed) return
            recorded += chunk.byteLength
            onRecorded?.(recorded)
            controller.enqueue(chunk)
          })
          .catch((cause: unknown) => {
            // A chunk the browser could not read: the upload fails with it rather than store a recording with a hole.
            if (closed) return
            closed = true
            controller.error(
              new RecordingError('recorder-failed', 'A recorded chunk could not be read: record again', { cause }),
            )
          })
      })
      recorder.addEventListener('error', (event) => {
        // The spec fires `error`, then the last `dataavailable` and `stop`: what was recorded is still sent.
        const cause = (event as Event & { error?: unknown }).error
        end = 'recorder-failed'
        failure = new RecordingError(
          'recorder-failed',
          `The browser's recorder failed (${(cause as Error | undefined)?.message ?? 'no reason given'}): what was recorded until then is kept`,
          { cause },
        )
      })
      recorder.addEventListener('stop', () => {
        for (const track of tracks) track.removeEventListener('ended', onTrackEnded)
        clearInterval(watch)
        queue = queue.then(() => {
          if (closed) return
          closed = true
          controller.close()
        })
        void queue.then(() => resolveEnded({ end, error: failure }))
      })
    },
    cancel() {
      // The upload stopped reading (it failed or was aborted): recording on would fill memory for nothing.
      closed = true
      stop()
    },
  })
  recorder.start(timeslice)

  return {
    stream,
    mimeType: recorder.mimeType || mimeType || 'video/webm',
    stop: () => stop(),
    pause: () => recorder.state === 'recording' && recorder.pause(),
    resume: () => recorder.state === 'paused' && recorder.resume(),
    ended,
  }
}
