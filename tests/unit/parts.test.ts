import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { MAX_OBJECT_SIZE, MAX_PART_SIZE, MAX_PARTS, MIN_PART_SIZE, MiB } from '../../protocol/limits.ts'
import { partRange, planParts } from '../../protocol/parts.ts'

const TiB = 1024 * 1024 * MiB

/** Sizes where off-by-one mistakes live, plus arbitrary ones across the whole range. */
const boundarySizes = [
  0,
  1,
  MIN_PART_SIZE - 1,
  MIN_PART_SIZE,
  MIN_PART_SIZE + 1,
  3 * MIN_PART_SIZE + 1,
  MAX_PARTS * MIN_PART_SIZE - 1,
  MAX_PARTS * MIN_PART_SIZE,
  MAX_PARTS * MIN_PART_SIZE + 1,
  MAX_OBJECT_SIZE,
]
const anySize = fc.oneof(
  fc.constantFrom(...boundarySizes),
  fc.integer({ min: 0, max: MAX_OBJECT_SIZE }),
  fc.integer({ min: 0, max: 200 * MiB }),
)
const anyPartSize = fc.oneof(
  fc.constant(MIN_PART_SIZE),
  fc.integer({ min: MIN_PART_SIZE, max: 64 * MiB }),
  fc.integer({ min: MIN_PART_SIZE, max: MAX_PART_SIZE }),
)
/** Multiples of the part size and their neighbours: the last part is full, or 1 byte. */
const sizeAroundMultiple = fc
  .tuple(anyPartSize, fc.integer({ min: 1, max: MAX_PARTS }), fc.integer({ min: -1, max: 1 }))
  .map(([partSize, n, delta]) => ({ partSize, size: n * partSize + delta }))

describe('planParts', () => {
  it('never plans more than 10 000 parts, and keeps parts at least as large as asked', () => {
    fc.assert(
      fc.property(anySize, anyPartSize, (size, partSize) => {
        const plan = planParts(size, partSize)
        expect(plan.count).toBeLessThanOrEqual(MAX_PARTS)
        expect(plan.partSize).toBeGreaterThanOrEqual(partSize)
        expect(plan.partSize).toBeLessThanOrEqual(MAX_PART_SIZE)
      }),
      { numRuns: 2000 },
    )
  })

  it('keeps the requested part size when 10 000 of them suffice', () => {
    fc.assert(
      fc.property(anySize, anyPartSize, (size, partSize) => {
        fc.pre(size <= MAX_PARTS * partSize)
        expect(planParts(size, partSize).partSize).toBe(partSize)
      }),
    )
  })

  it('covers [0, size) with contiguous parts, all but the last exactly partSize, the last non-empty', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          anySize.map((size) => ({ size, partSize: MIN_PART_SIZE })),
          sizeAroundMultiple,
        ),
        ({ size, partSize }) => {
          fc.pre(size >= 0 && size <= MAX_OBJECT_SIZE)
          const plan = planParts(size, partSize)
          expect(plan.count).toBe(Math.ceil(size / plan.partSize))
          if (size === 0) {
            expect(plan.lastPartSize).toBe(0)
            return
          }
          // Checking the first, second, second-to-last and last parts covers every seam.
          const [firstStart, firstEnd] = partRange(plan, 1)
          expect(firstStart).toBe(0)
          for (const n of new Set([1, 2, plan.count - 1, plan.count].filter((n) => n >= 1 && n <= plan.count))) {
            const [start, end] = partRange(plan, n)
            if (n > 1) expect(start).toBe(partRange(plan, n - 1)[1])
            expect(end - start).toBe(n < plan.count ? plan.partSize : plan.lastPartSize)
          }
          expect(partRange(plan, plan.count)[1]).toBe(size)
          expect(plan.lastPartSize).toBeGreaterThan(0)
          expect(plan.lastPartSize).toBeLessThanOrEqual(plan.partSize)
          expect(firstEnd).toBe(Math.min(plan.partSize, size))
        },
      ),
      { numRuns: 2000 },
    )
  })

  it('walks every part of a plan contiguously', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 400 * MiB }),
        fc.integer({ min: MIN_PART_SIZE, max: 32 * MiB }),
        (size, partSize) => {
          const plan = planParts(size, partSize)
          let expectedStart = 0
          for (let n = 1; n <= plan.count; n++) {
            const [start, end] = partRange(plan, n)
            expect(start).toBe(expectedStart)
            expect(end).toBeGreaterThan(start)
            expectedStart = end
          }
          expect(expectedStart).toBe(size)
        },
      ),
      { numRuns: 300 },
    )
  })

  it.each([
    [0, 0, 0],
    [1, 1, 1],
    [MIN_PART_SIZE - 1, 1, MIN_PART_SIZE - 1],
    [MIN_PART_SIZE, 1, MIN_PART_SIZE],
    [MIN_PART_SIZE + 1, 2, 1],
    [3 * MIN_PART_SIZE + 1, 4, 1],
    [MAX_PARTS * MIN_PART_SIZE, MAX_PARTS, MIN_PART_SIZE],
  ])('plans %i bytes as %i parts, the last of %i bytes', (size, count, lastPartSize) => {
    expect(planParts(size)).toEqual({ size, partSize: MIN_PART_SIZE, count, lastPartSize })
  })

  it('raises the part size to a whole MiB once 10 000 parts of 5 MiB are not enough', () => {
    const plan = planParts(MAX_PARTS * MIN_PART_SIZE + 1)
    expect(plan.partSize).toBe(6 * MiB)
    expect(plan.count).toBe(Math.ceil((MAX_PARTS * MIN_PART_SIZE + 1) / (6 * MiB)))
    const largest = planParts(5 * TiB)
    expect(largest.partSize % MiB).toBe(0)
    expect(largest.count).toBeLessThanOrEqual(MAX_PARTS)
  })

  it('refuses part sizes under 5 MiB with a message naming the option and value', () => {
    expect(() => planParts(10 * MiB, MIN_PART_SIZE - 1)).toThrow(
      'updraft: partSize must be a whole number from 5 MiB to 5 GiB, got 5242879',
    )
    expect(() => planParts(10 * MiB, 1.5 * MIN_PART_SIZE + 0.5)).toThrow(RangeError)
    expect(() => planParts(10 * MiB, MAX_PART_SIZE + 1)).toThrow(/partSize/)
  })

  it('refuses sizes that are negative, fractional or over 5 TiB', () => {
    for (const size of [-1, 0.5, MAX_OBJECT_SIZE + 1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => planParts(size)).toThrow(/size must be a whole number of bytes from 0 to 5 TiB/)
    }
  })
})
