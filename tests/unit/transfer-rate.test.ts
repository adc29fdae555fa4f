import { describe, expect, it } from 'vitest'
import { createRateMeter } from '../../src/ui/useTransferRate.ts'

const KiB = 1024
const MiB = 1024 * KiB

describe('createRateMeter (the speed a row shows)', () => {
  it('after Resume, gives no rate while the count stands still, and its first rate is the link speed, not a window that began before bytes moved', () => {
    // Found by CI: bytes started to move late in a sample (16 KiB in it), and the row showed
    // "16 KiB/s · 23 min left" on a 2 MiB/s link.
    const meter = createRateMeter(0, 10 * MiB)
    expect(meter(1000, 10 * MiB)).toBeUndefined()
    expect(meter(2000, 10 * MiB)).toBeUndefined()
    expect(meter(3000, 10 * MiB + 16 * KiB)).toBeUndefined()
    expect(meter(4000, 12 * MiB + 16 * KiB)).toBeUndefined()
    expect(meter(5000, 14 * MiB + 16 * KiB)).toBe(2 * MiB)
    expect(meter(6000, 16 * MiB + 16 * KiB)).toBe(2 * MiB)
  })

  it('waits again when the count goes back (a cancelled part sent again from 0)', () => {
    const meter = createRateMeter(0, 10 * MiB)
    expect(meter(1000, 9 * MiB)).toBeUndefined()
    expect(meter(2000, 9 * MiB)).toBeUndefined()
    expect(meter(3000, 10 * MiB)).toBeUndefined()
    expect(meter(4000, 11 * MiB)).toBeUndefined()
    expect(meter(5000, 12 * MiB)).toBe(MiB)
  })

  it('coarse progress (Firefox): one step, then a still sample, tells no "0 B/s" and no rate of a few bytes a second', () => {
    // Firefox after Resume: the count crept up by one event, then stood still for over a second;
    // the row read "0 B/s" and the summary "24596 h 10 min left".
    const meter = createRateMeter(0, 20 * MiB)
    expect(meter(1000, 20 * MiB + 5)).toBeUndefined()
    expect(meter(2000, 20 * MiB + 5)).toBeUndefined()
    expect(meter(3000, 20 * MiB + 5)).toBeUndefined()
    expect(meter(4000, 22 * MiB)).toBeUndefined()
    // Told once it grew in two samples since it first moved: the link's 2 MiB/s, give or take.
    const told = meter(5000, 24 * MiB)!
    expect(told).toBeGreaterThan(MiB)
    expect(told).toBeLessThan(4 * MiB)
  })

  it('once moving, a stall shows as a falling rate over the last 5 s, down to 0', () => {
    const meter = createRateMeter(0, 0)
    meter(1000, MiB)
    meter(2000, 2 * MiB)
    for (let s = 3; s <= 6; s++) expect(meter(s * 1000, s * MiB)).toBe(MiB)
    const falling = [7, 8, 9, 10, 11].map((s) => meter(s * 1000, 6 * MiB))
    for (let i = 1; i < falling.length; i++) expect(falling[i]).toBeLessThan(falling[i - 1]!)
    expect(falling.at(-1)).toBe(0)
  })
})
