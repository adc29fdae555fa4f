import { MAX_PART_SIZE, MIN_PART_SIZE } from './limits.ts'

// Apart from the part planner, so a page that checks the option ships none of the planning.

/** @throws `RangeError` when `partSize` is not a whole number from 5 MiB to 5 GiB (S3's bounds on a part). */
export function checkPartSize(partSize: number): void {
  if (!Number.isSafeInteger(partSize) || partSize < MIN_PART_SIZE || partSize > MAX_PART_SIZE) {
    throw new RangeError(`updraft: partSize must be a whole number from 5 MiB to 5 GiB, got ${partSize}`)
  }
}
