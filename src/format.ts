import { formatBytes } from '../protocol/bytes.ts'

// One formatter for sizes, shared with the upload API's refusals.
export { formatBytes, overLimit } from '../protocol/bytes.ts'

export const formatSpeed = (bytesPerSecond: number): string => `${formatBytes(Math.round(bytesPerSecond))}/s`

/** "8 s left", "3 min left", "1 h 5 min left". */
export function formatTimeLeft(seconds: number): string {
  const s = Math.max(1, Math.ceil(seconds))
  if (s < 60) return `${s} s left`
  const minutes = Math.round(s / 60)
  if (minutes < 60) return `${minutes} min left`
  const rest = minutes % 60
  return `${Math.floor(minutes / 60)} h${rest ? ` ${rest} min` : ''} left`
}
