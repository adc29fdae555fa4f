const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB']

/** Binary units, as part sizes and limits are counted (a 30 MiB limit reads "30 MiB", not "31.5 MB"). */
export function formatBytes(bytes: number): string {
  let value = bytes
  let unit = 0
  // Compared as shown, rounded: 1023.7 KiB reads "1 MiB", never "1024 KiB".
  while (Number(shown(value)) >= 1024 && unit < UNITS.length - 1) {
    value /= 1024
    unit++
  }
  return unit === 0 ? `${value} B` : `${trim(shown(value))} ${UNITS[unit]}`
}

const shown = (value: number) => value.toFixed(value < 10 ? 1 : 0)

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

/** "5.0" reads as more precise than it is: "5 MiB". */
const trim = (digits: string) => digits.replace(/\.0$/, '')
