/**
 * What an upload is doing, as `onStateChange` reports it: sending (or about to), held by
 * `PauseController.pause()`, or held until the network is back (`waitForNetwork`).
 */
export type UploadState = 'running' | 'paused' | 'waiting-for-network'

/** The options the pause machinery reads. */
export interface GateOptions {
  waitForNetwork?: boolean
  onStateChange?: (state: UploadState) => void
}
