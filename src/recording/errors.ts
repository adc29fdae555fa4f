/** Why a recording could not start, or ended early: {@link RecordingError}'s `reason`. */
export type RecordingFailure =
  /** The person (or the browser's settings) refused the camera, the microphone or the screen. */
  | 'denied'
  /** No camera or microphone is connected, or the one asked for is in use elsewhere. */
  | 'no-device'
  /** The browser cannot record: no `MediaRecorder`, no `getUserMedia`/`getDisplayMedia` (an insecure page), or not the `mimeType` asked for. */
  | 'unsupported'
  /** The recorder itself failed while recording (MediaRecorder's `error` event). */
  | 'recorder-failed'

/**
 * A recording that could not start or that the browser's recorder ended, with `reason` saying why;
 * `message` is one sentence for the person recording, and `cause` the browser's own error. Upload
 * failures are the engine's errors (`ApiError`, `S3Error`, `NetworkError`…), not this one.
 */
export class RecordingError extends Error {
  /** Always `RecordingError`. */
  override name = 'RecordingError'
  /** What went wrong, for a page that words it its own way. */
  declare readonly reason: RecordingFailure

  constructor(reason: RecordingFailure, message: string, options?: ErrorOptions) {
    super(message, options)
    Object.assign(this, { reason })
  }
}

/**
 * The browser's refusal of `getUserMedia`/`getDisplayMedia` as a {@link RecordingError}; the DOM
 * exception names are the Media Capture spec's (NotAllowedError for a refusal or a dismissed screen
 * picker, NotFoundError/OverconstrainedError for no such device, NotReadableError for one in use).
 */
export function captureRefused(error: unknown, screen: boolean): RecordingError {
  const name = (error as Error | undefined)?.name
  const what = screen ? 'share the screen' : 'use the camera or microphone'
  if (name === 'NotAllowedError' || name === 'SecurityError') {
    return new RecordingError(
      'denied',
      screen
        ? 'Screen sharing was refused or cancelled: choose a screen, window or tab to share, then try again'
        : "Permission to use the camera or microphone was refused: allow it in the browser's site settings, then try again",
      { cause: error },
    )
  }
  if (name === 'NotFoundError' || name === 'OverconstrainedError') {
    return new RecordingError('no-device', 'No camera or microphone was found: connect one, then try again', {
      cause: error,
    })
  }
  if (name === 'NotReadableError' || name === 'AbortError') {
    return new RecordingError('no-device', `The browser could not ${what}: close other apps using it, then try again`, {
      cause: error,
    })
  }
  return new RecordingError(
    'unsupported',
    `This page cannot ${what} (${name ?? String(error)}): open it over https, in a current browser`,
    { cause: error },
  )
}
