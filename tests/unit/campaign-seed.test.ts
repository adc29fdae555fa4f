// The fault campaign draws every run from one printed seed, and CAMPAIGN_SEED replays it: a
// failure seen in CI must be reproducible from its log.
import { describe, expect, it } from 'vitest'
import { campaignSeed, seedLine } from '../../dev/campaign-seed.ts'

describe('campaign seed', () => {
  it('takes CAMPAIGN_SEED when set, so a printed seed replays the run', () => {
    expect(campaignSeed({ CAMPAIGN_SEED: '123456' })).toBe(123456)
    expect(campaignSeed({ CAMPAIGN_SEED: ' 2147483647\n' })).toBe(2 ** 31 - 1)
  })

  it('draws a fresh seed per run when none is given', () => {
    const seeds = new Set(Array.from({ length: 20 }, () => campaignSeed({})))
    expect(seeds.size).toBeGreaterThan(1)
    for (const seed of [...seeds, campaignSeed({ CAMPAIGN_SEED: '' })]) {
      expect(Number.isInteger(seed) && seed >= 1 && seed <= 2 ** 31 - 1).toBe(true)
    }
  })

  it('refuses a seed it could not replay, saying what it wants', () => {
    for (const bad of ['abc', '0', '-5', '1.5', '2147483648']) {
      expect(() => campaignSeed({ CAMPAIGN_SEED: bad })).toThrow(
        `CAMPAIGN_SEED must be a whole number from 1 to 2147483647 (as a campaign run printed it), got '${bad}'`,
      )
    }
  })

  it('prints the command that replays it', () => {
    expect(seedLine(99, 'npm run soak')).toBe('fault campaign seed 99; replay: CAMPAIGN_SEED=99 npm run soak')
  })
})
