// One seed per fault-campaign run (tests/fault-campaign.test.ts, `npm run soak`), printed, so a
// failure seen in CI can be run again.

/** Names the seed of a campaign run, to replay one: `CAMPAIGN_SEED=… npx vitest run tests/fault-campaign.test.ts`, or `npm run soak`. */
export const SEED_VARIABLE = 'CAMPAIGN_SEED'

/**
 * The one seed a campaign run draws everything from (scenarios, fault choices, bytes): the
 * `CAMPAIGN_SEED` environment variable when set, else a fresh one. Callers print it, so a failure
 * in CI can be replayed. What it cannot replay is timing: a stall or a race with the network may
 * still land differently.
 */
export function campaignSeed(env: Record<string, string | undefined> = process.env): number {
  const given = env[SEED_VARIABLE]?.trim()
  if (!given) return 1 + Math.floor(Math.random() * (2 ** 31 - 2))
  const seed = Number(given)
  if (!Number.isInteger(seed) || seed < 1 || seed > 2 ** 31 - 1) {
    throw new RangeError(
      `${SEED_VARIABLE} must be a whole number from 1 to ${2 ** 31 - 1} (as a campaign run printed it), got '${given}'`,
    )
  }
  return seed
}

/** What a campaign run prints first: its seed and how to run it again. */
export const seedLine = (seed: number, command: string) =>
  `fault campaign seed ${seed}; replay: ${SEED_VARIABLE}=${seed} ${command}`
