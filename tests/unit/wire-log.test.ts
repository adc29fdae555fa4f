// The fault campaign's retry checker (dev/wire-log.ts) grades the engine: it must flag a
// request tried again after a final reply, and must not flag a part URL renewed after storage
// refused it (the same /parts body again, after a 200). The soak flagged 3 such renewals.
import { describe, expect, it } from 'vitest'
import { retryViolations, type WireEntry } from '../../dev/wire-log.ts'

const parts = (status: number | undefined, failed?: string): WireEntry => ({
  at: 0,
  step: 'POST /parts',
  key: 'POST /parts {"ticket":"t","partNumbers":[2]}',
  api: true,
  status,
  failed,
})
const part = (status: number, code?: string): WireEntry => ({
  at: 0,
  step: 'PUT ?partNumber',
  key: 'PUT ?partNumber /b/k 2',
  api: false,
  status,
  code,
})

describe('retryViolations', () => {
  it('a part URL asked for again after storage refused the first is a renewal, not a retry', () => {
    expect(
      retryViolations([parts(200), part(403), parts(200), part(400, 'ExpiredToken'), parts(200), part(200)], 8),
    ).toEqual([])
  })

  it('still counts the attempts of one /parts request, and flags one tried again after a final refusal', () => {
    expect(retryViolations([parts(undefined, 'reset'), parts(503), parts(200)], 2)).toEqual([
      'POST /parts {"ticket":"t","partNumbers":[2]} #0: 3 attempts, over the budget of 2',
    ])
    expect(retryViolations([parts(400), parts(200)], 8)).toEqual([
      'POST /parts {"ticket":"t","partNumbers":[2]} #0: tried again after a final reply (400 undefined), attempt 1',
    ])
  })

  it('flags a storage request tried again after a final reply', () => {
    expect(retryViolations([part(400, 'EntityTooSmall'), part(200)], 8)).toEqual([
      'PUT ?partNumber /b/k 2: tried again after a final reply (400 EntityTooSmall), attempt 1',
    ])
  })
})
