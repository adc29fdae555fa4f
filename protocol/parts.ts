import { MAX_OBJECT_SIZE, MAX_PARTS, MIN_PART_SIZE, MiB } from './limits.ts'
import { checkPartSize } from './part-size.ts'

/** How a body of `size` bytes splits into parts. Numbers only: part ranges come from `partRange`. */
export interface PartPlan {
  /** The body's length in bytes. */
  size: number
  /** Every part but the last is exactly this long. */
  partSize: number
  /** 0 for an empty body. */
  count: number
  /** Length of the last part: in 1..partSize when size > 0. */
  lastPartSize: number
}

/**
 * Splits `size` bytes into parts of `partSize` (at least 5 MiB), raising the part size to the next
 * whole MiB when more than 10 000 parts would be needed: what an upload of that size will send.
 * A body of at most one part goes as a single PUT (`count` 0 or 1).
 *
 * @param size - The body's length in bytes, 0 to 5 TiB.
 * @param partSize - Bytes per part, 5 MiB to 5 GiB; 5 MiB ({@link MIN_PART_SIZE}) when left out.
 * @throws `RangeError` when `size` or `partSize` is not a whole number within those bounds.
 * @example
 * ```ts
 * planParts(12 * 1024 * 1024) // { size: 12582912, partSize: 5242880, count: 3, lastPartSize: 2097152 }
 * ```
 */
export function planParts(size: number, partSize = MIN_PART_SIZE): PartPlan {
  if (!Number.isSafeInteger(size) || size < 0 || size > MAX_OBJECT_SIZE) {
    throw new RangeError(`updraft: size must be a whole number of bytes from 0 to 5 TiB, got ${size}`)
  }
  checkPartSize(partSize)
  const smallestAllowed = Math.ceil(size / MAX_PARTS)
  if (partSize < smallestAllowed) partSize = Math.ceil(smallestAllowed / MiB) * MiB
  const count = Math.ceil(size / partSize)
  return { size, partSize, count, lastPartSize: size - Math.max(0, count - 1) * partSize }
}

/** Byte range [start, end) of part `partNumber` (1-based, as S3 numbers them). */
export function partRange(plan: PartPlan, partNumber: number): [start: number, end: number] {
  const start = (partNumber - 1) * plan.partSize
  return [start, Math.min(start + plan.partSize, plan.size)]
}

/**
 * The highest part number an upload of unknown length may use: as many parts of `partSize` as
 * `maxFileSize` needs (the last one may overshoot it by less than a part: `/complete` checks the
 * stored size), never more than S3's 10 000.
 */
export function maxPartNumber(partSize: number, maxFileSize?: number): number {
  return maxFileSize === undefined ? MAX_PARTS : Math.min(MAX_PARTS, Math.ceil(maxFileSize / partSize))
}
