import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { createProgressThrottle } from '../../src/progress-throttle.ts'

beforeEach(() => vi.useFakeTimers())
afterEach(() => vi.useRealTimers())

describe('createProgressThrottle', () => {
  it('emits the first value at once, then at most once per 100 ms, and the last value always lands', () => {
    const emit = vi.fn()
    const throttle = createProgressThrottle(emit)
    // 1000 events a second for one second, as a fast XHR link can fire.
    for (let ms = 0; ms < 1000; ms++) {
      throttle.push(ms + 1)
      vi.advanceTimersByTime(1)
    }
    vi.advanceTimersByTime(100)
    expect(emit.mock.calls.length).toBeGreaterThanOrEqual(10)
    expect(emit.mock.calls.length).toBeLessThanOrEqual(11)
    expect(emit.mock.calls[0]).toEqual([1])
    expect(emit).toHaveBeenLastCalledWith(1000)
  })

  it('a trailing value lands one interval after the previous emit, not later', () => {
    const emit = vi.fn()
    const throttle = createProgressThrottle(emit)
    throttle.push(1)
    vi.advanceTimersByTime(30)
    throttle.push(2)
    throttle.push(3)
    expect(emit.mock.calls).toEqual([[1]])
    vi.advanceTimersByTime(69)
    expect(emit.mock.calls).toEqual([[1]])
    vi.advanceTimersByTime(1)
    expect(emit.mock.calls).toEqual([[1], [3]])
  })

  it('after a quiet interval the next value is emitted at once', () => {
    const emit = vi.fn()
    const throttle = createProgressThrottle(emit)
    throttle.push(1)
    vi.advanceTimersByTime(500)
    throttle.push(2)
    expect(emit.mock.calls).toEqual([[1], [2]])
  })

  it('flush emits the pending value now and leaves no timer; cancel drops it', () => {
    const emit = vi.fn()
    const throttle = createProgressThrottle(emit)
    throttle.push(1)
    throttle.push(2)
    throttle.flush()
    expect(emit.mock.calls).toEqual([[1], [2]])
    expect(vi.getTimerCount()).toBe(0)
    throttle.push(3)
    throttle.cancel()
    vi.advanceTimersByTime(1000)
    expect(emit.mock.calls).toEqual([[1], [2]])
    expect(vi.getTimerCount()).toBe(0)
  })
})
