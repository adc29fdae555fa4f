// The issue-11 fault campaign, CI-sized: real uploads through fault-injecting proxies in front of
// s3rver and Ceph RGW (and in front of the upload API), in both modes. Every run must settle; a
// success reads back byte-exact, a failure is a typed error; nothing but cleanup reaches the wire
// after settle; retries stay within the budget; progress is monotonic and reaches the total only
// on success; RGW lists no multipart upload left for the key. `npm run soak` runs the same at scale.
// One seed per run, printed first: `CAMPAIGN_SEED=<seed> npx vitest run tests/fault-campaign.test.ts`
// draws the same scenarios and faults again.
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { campaignSeed, seedLine } from '../dev/campaign-seed.ts'
import {
  type AbortMoment,
  CAMPAIGN_OPTIONS,
  COMMITTING_MOMENTS,
  type RunRecord,
  type Scenario,
  startCampaign,
} from '../dev/fault-campaign.ts'
import { MIN_PART_SIZE } from '../protocol/limits.ts'

const SEED = campaignSeed()
console.info(seedLine(SEED, 'npx vitest run tests/fault-campaign.test.ts'))

let campaign: Awaited<ReturnType<typeof startCampaign>>
beforeAll(async () => {
  campaign = await startCampaign(inject('rgw'))
})
afterAll(() => campaign?.stop())

const SINGLE_SIZES = [0, 1, 4321, MIN_PART_SIZE - 1]
const MULTIPART_SIZES = [MIN_PART_SIZE + 1, 2 * MIN_PART_SIZE + 777, 3 * MIN_PART_SIZE]

const faulted: fc.Arbitrary<Scenario> = fc.record({
  store: fc.constantFrom('rgw' as const, 's3rver' as const),
  mode: fc.constantFrom('token' as const, 'presigned' as const),
  size: fc.constantFrom(...SINGLE_SIZES, ...MULTIPART_SIZES),
  faultRate: fc.constant(0.3),
  seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
  leavePartsOnError: fc.boolean(),
})

/** Where an abort can land for each kind of upload (token mode creates the multipart upload itself). */
const MOMENTS: Record<'single' | 'token' | 'presigned', AbortMoment[]> = {
  single: ['api-sent', 'single-put-sent', 'single-put-answered'],
  token: [
    'api-sent',
    'create-sent',
    'create-answered',
    'mid-part',
    'part-answered',
    'complete-sent',
    'complete-answered',
  ],
  presigned: ['api-sent', 'mid-part', 'part-answered', 'complete-sent', 'complete-answered'],
}

// Aborts on RGW, which lists what is left; a few faults too, so cleanup itself meets them.
const aborted: fc.Arbitrary<Scenario> = fc
  .record({
    mode: fc.constantFrom('token' as const, 'presigned' as const),
    multipart: fc.integer({ min: 0, max: 3 }).map((n) => n > 0),
    seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
    pick: fc.nat(),
  })
  .map(({ mode, multipart, seed, pick }) => {
    const moments = MOMENTS[multipart ? mode : 'single']
    return {
      store: 'rgw' as const,
      mode,
      size: multipart ? MULTIPART_SIZES[pick % MULTIPART_SIZES.length]! : SINGLE_SIZES[pick % SINGLE_SIZES.length]!,
      faultRate: 0.1,
      seed,
      leavePartsOnError: false,
      abortAt: moments[pick % moments.length],
    }
  })

/** One aborted upload per kind and moment, to run before the random ones. */
const EVERY_MOMENT: Array<[Scenario]> = (['single', 'token', 'presigned'] as const).flatMap((kind) =>
  MOMENTS[kind].map((abortAt, i): [Scenario] => [
    {
      store: 'rgw',
      mode: kind === 'single' ? 'presigned' : kind,
      size: kind === 'single' ? SINGLE_SIZES[2]! : MULTIPART_SIZES[1]!,
      faultRate: 0.1,
      seed: 1000 + i,
      leavePartsOnError: false,
      abortAt,
    },
  ]),
)

/**
 * The stated bound: an abort settles the promise at once, except while the upload commits (then
 * Complete's in-flight attempt and at most one more decide, each cut after a stall). Asserted
 * generously for a loaded 2-core machine.
 */
const abortBound = (record: RunRecord) =>
  record.abortWhileCommitting ? 2 * CAMPAIGN_OPTIONS.stallTimeout + 3000 : 2000

const check = (record: RunRecord) => expect(record.violations, JSON.stringify(record, null, 1)).toEqual([])

describe('fault campaign', () => {
  it('every faulted upload settles and tells the truth', async () => {
    const outcomes = { success: 0, failure: 0 }
    const succeeded = new Set<string>()
    await fc.assert(
      fc.asyncProperty(faulted, async (scenario) => {
        const record = await campaign.run(scenario)
        check(record)
        outcomes[record.outcome as 'success' | 'failure']++
        if (record.outcome === 'success') succeeded.add(scenario.mode)
      }),
      { numRuns: 28, seed: SEED, endOnFailure: true },
    )
    // 30% of requests faulted with a budget of 8 tries: most uploads still get through, in both modes.
    expect(outcomes.success).toBeGreaterThan(outcomes.failure)
    expect([...succeeded].sort()).toEqual(['presigned', 'token'])
  })

  it('an abort at any moment settles within the bound, leaves nothing behind and reports what storage did', async () => {
    const seen = new Set<AbortMoment>()
    await fc.assert(
      fc.asyncProperty(aborted, async (scenario) => {
        const record = await campaign.run(scenario)
        check(record)
        if (record.abortToSettleMs === undefined) return
        seen.add(scenario.abortAt!)
        expect(record.abortToSettleMs, JSON.stringify(record)).toBeLessThan(abortBound(record))
        // Before the commit an abort is an AbortError. Where the upload API completes the upload
        // (multipart, both modes here), its /complete is the commit: once answered, the result.
        // Where the page's own write committed it (a single PUT), what follows is the upload API's
        // verdict, which an abort does not wait for (issue 24): AbortError, the object left stored
        // and unrecorded (the checker allows it then). An empty PUT has no body to stop: once sent
        // it commits, and the engine reports what storage did.
        const committing =
          COMMITTING_MOMENTS.has(scenario.abortAt!) || (scenario.size === 0 && scenario.abortAt === 'single-put-sent')
        if (!committing) expect(record.outcome).toBe('failure')
        const multipart = scenario.size > MIN_PART_SIZE
        if (scenario.abortAt === 'complete-answered' && multipart)
          expect(record.outcome, JSON.stringify(record)).toBe('success')
        if (scenario.abortAt === 'single-put-answered') expect(record.outcome, JSON.stringify(record)).toBe('failure')
      }),
      // One example per kind of upload and moment first, so the moments covered do not hang on the
      // seed (seed 31600693 drew 5 distinct ones in 24 runs and failed the coverage check below).
      { numRuns: 24, seed: SEED, endOnFailure: true, examples: EVERY_MOMENT },
    )
    expect(seen.size).toBeGreaterThanOrEqual(6)
  })
})
