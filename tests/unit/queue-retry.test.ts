import { afterEach, describe, expect, it, vi } from 'vitest'
import { ApiError, NetworkError, S3Error, UploadError } from '../../engine/core/errors.ts'
import { defaultRetry } from '../../engine/core/options.ts'
import { abortCancels, createRun, isHeld, type Phase } from '../../engine/core/run.ts'
import { createQueue, runPool } from '../../engine/transport/queue.ts'
import { isRetryable, retryDelay, withRetries } from '../../engine/transport/retry.ts'

const deferred = () => {
  let resolve!: () => void
  const promise = new Promise<void>((r) => (resolve = r))
  return { promise, resolve }
}
const tick = () => new Promise((r) => setTimeout(r, 0))

describe('createQueue', () => {
  it('runs at most `concurrency` tasks, in order, and hands a freed slot to the next at once', async () => {
    const queue = createQueue(2)
    const gates = [deferred(), deferred(), deferred(), deferred()]
    const started: number[] = []
    const runs = gates.map((gate, i) => queue.run(async () => (started.push(i), gate.promise)))
    await tick()
    expect(started).toEqual([0, 1])
    // A newcomer arriving while a slot changes hands must not squeeze in as a third runner.
    gates[1]!.resolve()
    const late = queue.run(async () => started.push(99))
    await tick()
    expect(started).toEqual([0, 1, 2])
    gates[0]!.resolve()
    gates[2]!.resolve()
    gates[3]!.resolve()
    await Promise.all([...runs, late])
    expect(started).toEqual([0, 1, 2, 3, 99])
  })

  it('drops a waiting task whose signal aborts, without starting it', async () => {
    const queue = createQueue(1)
    const gate = deferred()
    const first = queue.run(() => gate.promise)
    const controller = new AbortController()
    const task = vi.fn(async () => {})
    const waiting = queue.run(task, controller.signal)
    controller.abort()
    await expect(waiting).rejects.toMatchObject({ name: 'AbortError', message: 'Upload aborted' })
    gate.resolve()
    await first
    expect(task).not.toHaveBeenCalled()
    await expect(queue.run(async () => 'free again')).resolves.toBe('free again')
  })

  it('refuses a concurrency under 1', () => {
    expect(() => createQueue(0)).toThrow(
      'updraft: createQueue(concurrency): concurrency must be a whole number of at least 1, got 0',
    )
  })
})

describe('runPool', () => {
  /** Hands out 1..count, then undefined. */
  const upTo = (count: number) => {
    let n = 0
    return () => (n < count ? ++n : undefined)
  }

  it('keeps `limit` tasks in flight and covers 1..count exactly once', async () => {
    let inFlight = 0
    let peak = 0
    const seen: number[] = []
    await runPool(3, upTo(10), async (n) => {
      peak = Math.max(peak, ++inFlight)
      seen.push(n)
      await new Promise((r) => setTimeout(r, 1 + (n % 3)))
      inFlight--
    })
    expect(peak).toBe(3)
    expect(seen.sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
  })

  it('stops starting tasks after one fails, and rejects with that failure', async () => {
    const seen: number[] = []
    const failure = new Error('part 2 failed')
    await expect(
      runPool(2, upTo(100), async (n) => {
        seen.push(n)
        if (n === 2) throw failure
        await tick()
      }),
    ).rejects.toBe(failure)
    expect(seen.length).toBeLessThan(5)
  })

  it('takes items from an asynchronous source one at a time, as slots free up', async () => {
    let taken = 0
    let inFlight = 0
    let peak = 0
    await runPool(
      2,
      async () => {
        await tick()
        return taken < 5 ? ++taken : undefined
      },
      async () => {
        peak = Math.max(peak, ++inFlight)
        await tick()
        inFlight--
      },
    )
    expect(taken).toBe(5)
    expect(peak).toBe(2)
  })
})

describe('retry policy', () => {
  afterEach(() => vi.useRealTimers())

  it.each([
    [new NetworkError('offline'), true],
    [new S3Error('InternalError', 'x', 500), true],
    [new S3Error('SlowDown', 'x', 503), true],
    [new S3Error('TooManyRequests', 'x', 429), true],
    [new S3Error('RequestTimeout', 'x', 400), true],
    // The body did not match the checksum it carried: damaged on the way, worth sending again.
    [new S3Error('BadDigest', 'x', 400), true],
    [new S3Error('InvalidDigest', 'x', 400), false],
    [new S3Error('Http408', 'x', 408), true],
    [new ApiError('Internal Server Error', 500), true],
    [new ApiError('Too many requests', 429), true],
    // A 500 the API says no retry heals (a wrong secret, an unknown bucket: issue 35).
    [new ApiError('The upload API is misconfigured: …', 500, null, 'ServerMisconfigured'), false],
    [new S3Error('AccessDenied', 'x', 403), false],
    [new S3Error('EntityTooSmall', 'x', 400), false],
    [new ApiError('Not authorized to upload', 403), false],
    [new UploadError('no ETag'), false],
    [new TypeError('a bug'), false],
  ])('retries %s: %s', (error, expected) => {
    expect(isRetryable(error)).toBe(expected)
  })

  it('uses equal jitter under an exponential cap, and honours Retry-After seconds', () => {
    expect(retryDelay(1, 500, null, () => 0)).toBe(250)
    expect(retryDelay(1, 500, null, () => 0.999)).toBe(499)
    expect(retryDelay(3, 500, null, () => 0.5)).toBe(1500)
    expect(retryDelay(30, 500, null, () => 0.999)).toBe(9_995)
    expect(retryDelay(1, 500, '2', () => 0)).toBe(2000)
    expect(retryDelay(1, 500, '0', () => 0.9)).toBe(0)
    expect(retryDelay(1, 500, '3600', () => 0)).toBe(20_000)
    // S3 sends seconds; anything else falls back to backoff rather than guessing.
    expect(retryDelay(2, 500, 'Thu, 01 Jan 2026 00:00:05 GMT', () => 0.5)).toBe(750)
  })

  // Regression: 3 attempts from a 200 ms full-jitter base gave up within ~1.2 s, so one Wi-Fi blip
  // failed a multi-GB upload. The default budget now waits at least 17.75 s before giving up.
  it('the default budget outlasts a network blip of several seconds, however the dice fall', () => {
    const { limit, delay: base } = defaultRetry
    let least = 0
    for (let retry = 1; retry <= limit; retry++) least += retryDelay(retry, base, null, () => 0)
    expect(least).toBeGreaterThanOrEqual(15_000)
  })

  it('waits between attempts with fake timers and gives up after the last', async () => {
    vi.useFakeTimers()
    const attempt = vi.fn(async () => {
      throw new S3Error('InternalError', 'x', 500)
    })
    const retried: number[] = []
    const run = createRun({ retry: { limit: 2 }, onRetry: ({ attempt }) => retried.push(attempt) })
    const result = withRetries(run, undefined, attempt).catch((e: unknown) => e)
    await vi.runAllTimersAsync()
    expect(await result).toMatchObject({ code: 'InternalError' })
    expect(attempt).toHaveBeenCalledTimes(3)
    expect(retried).toEqual([1, 2])
  })

  it('a retry field given as undefined keeps its default, as every other option does', () => {
    const { retry } = createRun({ retry: { limit: undefined, delay: undefined } }).options
    expect(retry).toEqual(defaultRetry)
  })

  it('resolved options are frozen: run state lives on the run, never on them', () => {
    const run = createRun({ partConcurrency: 2 })
    expect(Object.isFrozen(run.options)).toBe(true)
    expect(() => Object.assign(run.options, { partSize: 1 })).toThrow(TypeError)
    run.phase = 'committing'
    expect(run.options).not.toHaveProperty('phase')
  })

  it("the commit rule: the caller's abort and a pause cancel in every phase but committing; another signal's abort always", () => {
    const caller = new AbortController()
    const run = createRun({ signal: caller.signal })
    const held = AbortSignal.abort()
    const sibling = new AbortController().signal
    const rule = (phase: Phase) => {
      run.phase = phase
      return [abortCancels(run, caller.signal), isHeld(run, held), abortCancels(run, sibling)]
    }
    for (const phase of ['requesting', 'transferring', 'confirming', 'settled'] as const)
      expect(rule(phase), phase).toEqual([true, true, true])
    expect(rule('committing')).toEqual([false, false, true])
    expect(isHeld(run, undefined)).toBe(false)
  })

  describe('retry.shouldRetry overrules the built-in rule, within the limit', () => {
    const attempts = async (
      error: Error,
      shouldRetry: (error: UploadError, attempt: number) => boolean | undefined,
    ) => {
      vi.useFakeTimers()
      const attempt = vi.fn(async () => {
        throw error
      })
      const asked: Array<[string, number]> = []
      const run = createRun({
        retry: { limit: 3, delay: 1, shouldRetry: (e, n) => (asked.push([e.name, n]), shouldRetry(e, n)) },
      })
      const result = withRetries(run, undefined, attempt).catch((e: unknown) => e)
      await vi.runAllTimersAsync()
      expect(await result).toBe(error)
      return { tries: attempt.mock.calls.length, asked }
    }

    it('true retries what the rule would not (a 403), up to the limit', async () => {
      const { tries, asked } = await attempts(new S3Error('AccessDenied', 'x', 403), () => true)
      expect(tries).toBe(4)
      expect(asked).toEqual([
        ['S3Error', 1],
        ['S3Error', 2],
        ['S3Error', 3],
        ['S3Error', 4],
      ])
    })

    it('false gives up on what the rule would retry (a 500)', async () => {
      expect((await attempts(new S3Error('InternalError', 'x', 500), () => false)).tries).toBe(1)
    })

    it('undefined leaves it to the rule: a 500 is retried, a 404 not', async () => {
      expect((await attempts(new ApiError('busy', 503), () => undefined)).tries).toBe(4)
      expect((await attempts(new ApiError('no such route', 404), () => undefined)).tries).toBe(1)
    })

    it('a bug (a TypeError) is never offered to it, nor retried', async () => {
      const { tries, asked } = await attempts(new TypeError('bad option'), () => true)
      expect(tries).toBe(1)
      expect(asked).toEqual([])
    })
  })
})
