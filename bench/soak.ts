// `npm run soak`: the issue-11 fault campaign at scale. At least 1000 uploads (0 B … 23 MiB,
// single and multipart, token and presigned, s3rver and a Ceph RGW of its own) through proxies
// that fault 30% of requests to storage and to the upload API, then aborts at every moment of an
// upload. Prints uploads, faults by kind, retries, successes, typed failures, corrupt, hung,
// orphans and abort-to-reject times. `npm run soak -- 200 3`: 200 faulted uploads, 3 aborts per moment.
// It prints its seed first; `CAMPAIGN_SEED=<seed> npm run soak` draws the same uploads and faults again.

import { campaignSeed, seedLine } from '../dev/campaign-seed.ts'
import {
  ABORT_MOMENTS,
  type AbortMoment,
  type RunRecord,
  type Scenario,
  seededRandom,
  startCampaign,
} from '../dev/fault-campaign.ts'
import { startRgw } from '../dev/rgw.ts'
import { createTestBuckets, rgwStore } from '../dev/stores.ts'
import { MIN_PART_SIZE, MiB } from '../protocol/limits.ts'

const UPLOADS = Number(process.argv[2] ?? 1000)
const ABORTS_PER_MOMENT = Number(process.argv[3] ?? 12)
const SIZES = [0, 1, 4321, MIN_PART_SIZE - 1, MIN_PART_SIZE + 1, 2 * MIN_PART_SIZE + 777, 3 * MIN_PART_SIZE, 23 * MiB]
/** Where an abort can land for each kind of upload. */
const MOMENTS: Record<'single' | 'token' | 'presigned', readonly AbortMoment[]> = {
  single: ['api-sent', 'single-put-sent', 'single-put-answered'],
  token: ABORT_MOMENTS.filter((moment) => !moment.startsWith('single')),
  presigned: ABORT_MOMENTS.filter((moment) => !moment.startsWith('single') && !moment.startsWith('create')),
}

const SEED = campaignSeed()
console.error(
  seedLine(SEED, ['npm run soak', ...(process.argv.length > 2 ? ['--', ...process.argv.slice(2)] : [])].join(' ')),
)
const started = Date.now()
const rgw = await startRgw()
const store = rgwStore(rgw)
await createTestBuckets(store)
const campaign = await startCampaign(store)
const random = seededRandom(SEED)
const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!

/** A run whose checks themselves failed (storage not answering the harness) is a violation too. */
const runChecked = (scenario: Scenario): Promise<RunRecord> =>
  campaign.run(scenario).catch((error: unknown) => ({
    scenario,
    outcome: 'failure' as const,
    retries: 0,
    faults: {},
    orphans: 0,
    leftForSweep: 0,
    corrupt: false,
    violations: [`the harness could not check the run: ${String(error)}`],
    serverLog: [],
  }))

const faulted: RunRecord[] = []
const aborted: RunRecord[] = []
try {
  for (let i = 0; i < UPLOADS; i++) {
    const scenario: Scenario = {
      store: pick(['rgw', 's3rver'] as const),
      mode: pick(['token', 'presigned'] as const),
      size: pick(SIZES),
      faultRate: 0.3,
      seed: Math.floor(random() * 2 ** 31),
      leavePartsOnError: random() < 0.1,
    }
    faulted.push(await runChecked(scenario))
    if ((i + 1) % 100 === 0) console.error(`  ${i + 1}/${UPLOADS} faulted uploads, ${secondsSince(started)} s`)
  }
  for (const mode of ['token', 'presigned'] as const) {
    for (const [kind, moments] of [
      ['single', MOMENTS.single],
      [mode, MOMENTS[mode]],
    ] as const) {
      for (const abortAt of moments) {
        for (let i = 0; i < ABORTS_PER_MOMENT; i++) {
          const size =
            kind === 'single'
              ? pick(SIZES.filter((s) => s <= MIN_PART_SIZE))
              : pick(SIZES.filter((s) => s > MIN_PART_SIZE))
          const seed = Math.floor(random() * 2 ** 31)
          aborted.push(
            await runChecked({ store: 'rgw', mode, size, faultRate: 0.1, seed, leavePartsOnError: false, abortAt }),
          )
        }
      }
    }
  }
} finally {
  await campaign.stop()
  await rgw.stop()
}

report()

function report() {
  const all = [...faulted, ...aborted]
  const faults: Record<string, number> = {}
  for (const record of all)
    for (const [fault, count] of Object.entries(record.faults)) faults[fault] = (faults[fault] ?? 0) + count!
  const count = (records: RunRecord[], test: (record: RunRecord) => boolean) => records.filter(test).length
  const violated = all.filter((record) => record.violations.length > 0)

  console.log(
    `# Soak: ${faulted.length} faulted uploads (30% of requests faulted) + ${aborted.length} aborts, ${secondsSince(started)} s, seed ${SEED}`,
  )
  console.log('')
  console.log('| figure | value |')
  console.log('|---|---:|')
  const rows: Array<[string, number | string]> = [
    ['uploads', all.length],
    ['faults injected', Object.values(faults).reduce((sum, n) => sum + n, 0)],
    ['retries', all.reduce((sum, record) => sum + record.retries, 0)],
    ['successes (read back byte-exact)', count(faulted, (r) => r.outcome === 'success')],
    [
      'typed failures',
      count(faulted, (r) => r.outcome === 'failure' && !r.violations.some((v) => v.startsWith('untyped'))),
    ],
    ['untyped failures', count(all, (r) => r.violations.some((v) => v.startsWith('untyped')))],
    ['corrupt', count(all, (r) => r.corrupt)],
    ['hung', count(all, (r) => r.outcome === 'hung')],
    ['orphans (RGW, on the key the engine used)', all.reduce((sum, record) => sum + record.orphans, 0)],
    [
      "uploads left on other keys by a lost upload-request reply (the sweep's)",
      all.reduce((sum, r) => sum + r.leftForSweep, 0),
    ],
    ['runs with any violation', violated.length],
  ]
  for (const [figure, value] of rows) console.log(`| ${figure} | ${value} |`)
  console.log('')
  console.log('| fault | count |')
  console.log('|---|---:|')
  for (const [fault, n] of Object.entries(faults).sort((a, b) => b[1] - a[1])) console.log(`| ${fault} | ${n} |`)
  console.log('')
  console.log('Abort → promise settled, ms (median / p95 / max):')
  for (const committing of [false, true]) {
    const times = aborted
      .filter((record) => record.abortToSettleMs !== undefined && record.abortWhileCommitting === committing)
      .map((record) => record.abortToSettleMs!)
      .sort((a, b) => a - b)
    const at = (q: number) =>
      times.length ? times[Math.min(times.length - 1, Math.floor(q * times.length))]!.toFixed(1) : '-'
    console.log(
      `- ${committing ? 'while committing (Complete sent or answered)' : 'before the commit'}: ${at(0.5)} / ${at(0.95)} / ${times.length ? times.at(-1)!.toFixed(1) : '-'} (${times.length} aborts)`,
    )
  }
  // Only aborts that happened: an upload that failed before its moment came was never aborted.
  const afterCompletion = aborted.filter(
    (r) =>
      r.abortToSettleMs !== undefined &&
      (r.scenario.abortAt === 'complete-answered' || r.scenario.abortAt === 'single-put-answered'),
  )
  // Where the upload API completes (presigned multipart), the commit is its call and an abort waits
  // for it; where the page completes, an abort ends the upload before /complete's verdict (issue 24).
  console.log(
    `- aborts after storage completed the object: ${count(afterCompletion, (r) => r.outcome === 'success')} resolved with it, ${count(afterCompletion, (r) => r.outcome === 'failure')} ended with AbortError before /complete, the object left unrecorded (of ${afterCompletion.length})`,
  )
  console.log('')
  console.log('Typed failures of the faulted uploads, by error (message without ids):')
  const kinds: Record<string, number> = {}
  for (const record of faulted) {
    if (record.outcome !== 'failure' || !record.error) continue
    const kind = record.error
      .replace(/\(HTTP.*\)$/, '')
      .replace(/\d+/g, 'N')
      .slice(0, 110)
    kinds[kind] = (kinds[kind] ?? 0) + 1
  }
  for (const [kind, n] of Object.entries(kinds).sort((a, b) => b[1] - a[1])) console.log(`- ${n} × ${kind}`)
  if (violated.length > 0) {
    console.log('')
    console.log('Violations:')
    for (const record of violated.slice(0, 20)) console.log(JSON.stringify(record))
  }
  process.exitCode = violated.length > 0 ? 1 : 0
}

function secondsSince(start: number) {
  return Math.round((Date.now() - start) / 1000)
}
