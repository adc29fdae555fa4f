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

  it('progress in steps of megabytes (Firefox through socket buffers): within 2x of the link from the first rate on, within 1.5x once 10 s have moved', () => {
    // The count Firefox ESR showed once a second after Resume on a 2 MiB/s link (rows-browsers),
    // in MiB: steps of 4–8 MiB, nothing between. A 5 s window told 0.25x to 2.6x the link's speed.
    const counts = [
      37, 38, 39, 40, 44, 45, 45, 45, 45, 49, 57, 59, 60, 60, 60, 65, 65, 65, 65, 73, 78, 79, 80, 80, 80, 85,
    ]
    const meter = createRateMeter(0, 36 * MiB)
    const told = counts.map((count, i) => meter((i + 1) * 1000, count * MiB))
    const link = ((counts.at(-1)! - counts[0]!) * MiB) / (counts.length - 1)
    const moving = told.filter((rate) => rate !== undefined)
    expect(moving.length).toBeGreaterThan(20)
    for (const rate of moving) expect(rate / link).toBeGreaterThanOrEqual(0.5)
    for (const rate of moving) expect(rate / link).toBeLessThanOrEqual(2)
    for (const rate of told.slice(10)) expect(rate! / link).toBeGreaterThanOrEqual(1 / 1.5)
    for (const rate of told.slice(10)) expect(rate! / link).toBeLessThanOrEqual(1.5)
  })

  it('once moving, a stall shows as a falling rate over the last 10 s, down to 0', () => {
    const meter = createRateMeter(0, 0)
    for (let s = 1; s <= 12; s++) meter(s * 1000, s * MiB)
    expect(meter(13_000, 13 * MiB)).toBe(MiB)
    const falling = [14, 16, 18, 20, 22, 24].map((s) => meter(s * 1000, 13 * MiB))
    for (let i = 1; i < falling.length; i++) expect(falling[i]).toBeLessThan(falling[i - 1]!)
    expect(falling.at(-1)).toBe(0)
  })
})
