/**
 * Sizes in words, one home for the page's components and the upload API's refusals, so a limit reads
 * the same wherever it is said ("101 MiB is over the 100 MiB limit", never "filesize 105906176 is
 * over the limit of 104857600 bytes"). Pure.
 */

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB']

/**
 * Binary units, as part sizes and limits are counted (a 30 MiB limit reads "30 MiB", not
 * "31.5 MB"): one decimal under 10, none above.
 */
export const formatBytes = (bytes: number): string => inUnits(bytes)

/** {@link formatBytes} with `digits` decimals (default: one under 10, none above). */
function inUnits(bytes: number, digits?: number): string {
  const shown = (value: number) => value.toFixed(digits ?? (value < 10 ? 1 : 0))
  let value = bytes
  let unit = 0
  // Compared as shown, rounded: 1023.7 KiB reads "1 MiB", never "1024 KiB".
  while (Number(shown(value)) >= 1024 && unit < UNITS.length - 1) {
    value /= 1024
    unit++
  }
  return unit === 0 ? `${value} B` : `${trim(shown(value))} ${UNITS[unit]}`
}

/** "5.0" reads as more precise than it is: "5 MiB"; "100.40" as "100.4". */
const trim = (figure: string) => (figure.includes('.') ? figure.replace(/\.?0+$/, '') : figure)

/**
 * "101 MiB is over the 100 MiB limit": with as many decimals as it takes for the two figures to
 * differ (a file of 100.4 MiB is never "100 MiB over the 100 MiB limit"), else in bytes.
 */
export function overLimit(size: number, limit: number): string {
  for (const digits of [undefined, 1, 2, 3]) {
    const [said, allowed] = [inUnits(size, digits), inUnits(limit, digits)]
    if (said !== allowed) return `${said} is over the ${allowed} limit`
  }
  return `${size} bytes is over the limit of ${limit} bytes`
}
