import { captureRefused, RecordingError } from './errors.ts'

/**
 * What to record: the camera with the microphone, the microphone alone, the screen (a window or a
 * tab, with its sound where the browser offers it), a `MediaStream` the page already has, or a
 * function that makes one when recording starts.
 */
export type RecordingSource =
  | 'camera'
  | 'microphone'
  | 'screen'
  | MediaStream
  | (() => MediaStream | Promise<MediaStream>)

/** The stream to record, and whether it is ours to end (the tracks this module asked the browser for). */
export async function openSource(source: RecordingSource): Promise<{ media: MediaStream; owned: boolean }> {
  if (typeof source !== 'string') {
    const media = typeof source === 'function' ? await source() : source
    return { media, owned: false }
  }
  const screen = source === 'screen'
  const devices = globalThis.navigator?.mediaDevices
  if (!devices || !(screen ? devices.getDisplayMedia : devices.getUserMedia)) {
    throw new RecordingError(
      'unsupported',
      `This page cannot ${screen ? 'share the screen' : 'use the camera or microphone'}: open it over https (or localhost), in a current browser`,
    )
  }
  try {
    const media = screen
      ? await devices.getDisplayMedia({ video: true, audio: true })
      : await devices.getUserMedia(source === 'camera' ? { video: true, audio: true } : { audio: true })
    return { media, owned: true }
  } catch (error) {
    throw captureRefused(error, screen)
  }
}

/** The file name a recording of `mimeType` is stored under: `recording-2026-11-28T01-20-00.webm`. */
export function recordingName(mimeType: string, startedAt: Date): string {
  const essence = mimeType.split(';')[0]!.trim().toLowerCase()
  const extension = essence.endsWith('/mp4') ? 'mp4' : essence.endsWith('/ogg') ? 'ogg' : 'webm'
  return `recording-${startedAt.toISOString().slice(0, 19).replace(/:/g, '-')}.${extension}`
}
