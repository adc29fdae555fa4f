const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB']

/** Binary units, as part sizes are counted (a 5 MiB part reads "5.0 MiB", not "5.2 MB"). */
export function formatBytes(bytes: number): string {
  let value = bytes
  let unit = 0
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024
    unit++
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(value < 10 ? 1 : 0)} ${UNITS[unit]}`
}

export const formatSpeed = (bytesPerSecond: number): string => `${formatBytes(Math.round(bytesPerSecond))}/s`

export const formatPercent = (progress: number): string => `${Math.floor(progress)}%`
