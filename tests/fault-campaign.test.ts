// The issue-11 fault campaign, CI-sized: real uploads through fault-injecting proxies in front of
// s3rver and Ceph RGW (and in front of the endpoint), in both modes. Every run must settle; a
// success reads back byte-exact, a failure is a typed error; nothing but cleanup reaches the wire
// after settle; retries stay within the budget; progress is monotonic and reaches the total only
// on success; RGW lists no multipart upload left for the key. `npm run soak` runs the same at scale.
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { MIN_PART_SIZE } from '../protocol/limits.ts'
import { ABORT_MOMENTS, type AbortMoment, CAMPAIGN_OPTIONS, COMMITTING_MOMENTS, type Scenario, startCampaign } from './helpers/fault-campaign.ts'

let campaign: Awaited<ReturnType<typeof startCampaign>>
beforeAll(async () => {
  campaign = await startCampaign(inject('rgw'))
})
afterAll(() => campaign?.stop())

const SIZES = [0, 1, 4321, MIN_PART_SIZE - 1, MIN_PART_SIZE + 1, 2 * MIN_PART_SIZE + 777, 3 * MIN_PART_SIZE]

const faulted: fc.Arbitrary<Scenario> = fc.record({
  store: fc.constantFrom('rgw' as const, 's3rver' as const),
  mode: fc.constantFrom('token' as const, 'presigned' as const),
  size: fc.constantFrom(...SIZES),
  faultRate: fc.constant(0.3),
  seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
  leavePartsOnError: fc.boolean({ weight: 5 } as never).map((b) => b),
})

describe('fault campaign', () => {
  it('every faulted upload settles and tells the truth', async () => {
    await fc.assert(
      fc.asyncProperty(faulted, async (scenario) => {
        const record = await campaign.run(scenario)
        console.log(record.outcome, scenario.store, scenario.mode, scenario.size, record.retries, JSON.stringify(record.faults), record.error ?? '', record.violations)
        expect(record.violations, JSON.stringify(record)).toEqual([])
      }),
      { numRuns: 24, endOnFailure: true },
    )
  })
})
