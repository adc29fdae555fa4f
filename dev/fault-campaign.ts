import {
  AbortMultipartUploadCommand,
  DeleteObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  ListPartsCommand,
  type S3Client,
} from '@aws-sdk/client-s3'
import { defaultRetry } from '../engine/core/options.ts'
import { isUploadError, type UploadResult, upload } from '../engine/index.ts'
import { MIN_PART_SIZE } from '../protocol/limits.ts'
import { createUploadHandler, type UploadHandlerConfig } from '../server/index.ts'
import { type Fault, type FaultProxy, faultsFor, startFaultProxy } from './fault-proxy.ts'
import { readObject, sdkClient, sha256, testBytes } from './s3-client.ts'
import { S3RVER_CREDENTIALS, startS3rver } from './s3rver.ts'
import { serveHandler } from './serve-handler.ts'
import type { RgwStore, TestStore } from './stores.ts'
import { startStsServer } from './sts-server.ts'
import { CLEANUP_STEPS, recordingTransport, retryViolations, type WireEntry } from './wire-log.ts'

/** Where in an upload an abort can land (see `run`). */
export const ABORT_MOMENTS = [
  'api-sent',
  'create-sent',
  'create-answered',
  'single-put-sent',
  'single-put-answered',
  'mid-part',
  'part-answered',
  'complete-sent',
  'complete-answered',
] as const
export type AbortMoment = (typeof ABORT_MOMENTS)[number]
/** Moments when the upload is committing: an abort then waits for storage's answer, the truth. */
export const COMMITTING_MOMENTS = new Set<AbortMoment>(['complete-sent', 'complete-answered', 'single-put-answered'])

export interface Scenario {
  store: 'rgw' | 's3rver'
  mode: 'token' | 'presigned'
  size: number
  /** Share of requests (storage and upload API) that get a fault. */
  faultRate: number
  /** Seeds the fault choices and the bytes. */
  seed: number
  leavePartsOnError: boolean
  abortAt?: AbortMoment
}

export interface RunRecord {
  scenario: Scenario
  outcome: 'success' | 'failure' | 'hung'
  error?: string
  retries: number
  faults: Partial<Record<Fault, number>>
  /** abort() → promise settled, ms (aborted runs). */
  abortToSettleMs?: number
  /** Whether the abort came while the upload was committing (Complete sent or answered, the single PUT answered). */
  abortWhileCommitting?: boolean
  /** Multipart uploads left on RGW for the key the engine used (must be 0 unless leavePartsOnError). */
  orphans: number
  /** Uploads left on other keys of the run: an upload request whose reply was lost after the upload API created the upload (the sweep's). */
  leftForSweep: number
  /** Object bytes that differ from what was sent. */
  corrupt: boolean
  violations: string[]
  /** The wire log, ms from the upload's start, when something was violated: what to look at first. */
  wire?: string[]
  /** What the upload API logged as failures (its 500s) during the run. */
  serverLog: string[]
}

/** Test-sized timing, so a stall costs a second rather than 20. */
export const CAMPAIGN_OPTIONS = { stallTimeout: 1000, retry: { delay: 10 }, cleanupTimeout: 15_000 }
const MAX_ATTEMPTS = defaultRetry.limit + 1
/** Any run still unsettled after this has hung. */
const HANG_MS = 90_000

/** Storage calls of the harness itself (read back, list, clean up) must not hang a run either. */
const ADMIN_CALL_MS = 30_000
function bounded<T>(call: Promise<T>, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout>
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer from storage in ${ADMIN_CALL_MS} ms`)), ADMIN_CALL_MS)
  })
  return Promise.race([call, deadline]).finally(() => clearTimeout(timer))
}

/** Deterministic 0..1 numbers from a seed (mulberry32), so a run's faults can be replayed. */
export function seededRandom(seed: number) {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

interface StoreRig {
  store: TestStore
  storage: FaultProxy
  api: FaultProxy
  apiUrl: string
  admin: S3Client
  /** Listing works: RGW, not s3rver (which has no ListMultipartUploads nor AbortMultipartUpload). */
  lists: boolean
}

/**
 * s3rver and the given RGW, each behind a fault proxy, each with Updraft's upload API (also behind a
 * fault proxy) issuing presigned URLs and token credentials (RGW's own STS; an STS stand-in for
 * s3rver). `run` performs one upload under a scenario and checks every promise the issue makes.
 */
export async function startCampaign(rgw: RgwStore) {
  const s3rver = await startS3rver()
  const sts = await startStsServer({ caller: S3RVER_CREDENTIALS, issue: S3RVER_CREDENTIALS })
  let decide: (kind: 'storage' | 'api', step: string) => Fault | undefined = () => undefined
  const closers: Array<() => Promise<unknown>> = []
  /** What the upload APIs logged as faults (500s), for the record of the run they happened in. */
  const serverLog: string[] = []

  async function rig(store: TestStore, sts: UploadHandlerConfig['sts']): Promise<StoreRig> {
    const storage = await startFaultProxy({
      target: store.endpoint,
      kind: 'storage',
      decide: ({ step }) => decide('storage', step),
    })
    const handler = createUploadHandler({
      ...store.credentials,
      bucket: store.bucket,
      region: store.region,
      endpoint: storage.url,
      forcePathStyle: true,
      sts,
      // Every run's keys under its own prefix, so what a run leaves behind is found by listing it.
      key: (_request, filename, body) => `${String(body.run)}/${crypto.randomUUID()}/${filename}`,
      logger: {
        error: (entry) => {
          const { route, err } = entry as { route?: string; err?: { code?: string; message?: string } }
          serverLog.push(`/${route ?? '?'}: ${err?.code ?? ''} ${err?.message ?? JSON.stringify(entry).slice(0, 200)}`)
        },
        warn: () => {},
      },
    })
    const served = await serveHandler(handler)
    const api = await startFaultProxy({ target: served.origin, kind: 'api', decide: ({ step }) => decide('api', step) })
    const admin = sdkClient(store)
    closers.push(storage.stop, api.stop, served.close, async () => admin.destroy())
    return { store, storage, api, apiUrl: `${api.url}/api/s3-upload`, admin, lists: store.name === 'rgw' }
  }

  const rigs = {
    rgw: await rig(rgw, { mode: 'assume-role', roleArn: rgw.roleArn, endpoint: rgw.endpoint }),
    s3rver: await rig(s3rver, { mode: 'federation', endpoint: sts.endpoint }),
  }

  async function run(scenario: Scenario): Promise<RunRecord> {
    const { store, storage, api, apiUrl, admin, lists } = rigs[scenario.store]
    const random = seededRandom(scenario.seed)
    decide = (kind, step) => {
      if (random() >= scenario.faultRate) return undefined
      const faults = faultsFor(kind, step)
      return faults[Math.floor(random() * faults.length)]
    }
    serverLog.length = 0
    const faultsBefore = { ...storage.stats.faults }
    const apiFaultsBefore = { ...api.stats.faults }
    // Under the upload API's keyPrefix, which presigned URLs may write.
    const runPrefix = `next-s3-uploads/campaign-${scenario.seed}-${crypto.randomUUID().slice(0, 8)}`
    const bytes = testBytes(scenario.size, scenario.seed)
    const controller = new AbortController()
    const progress: Array<{ loaded: number; total: number }> = []
    const violations: string[] = []
    let retries = 0
    let abortedAt: number | undefined
    let usedKey: string | undefined

    const abort = (moment: AbortMoment) => {
      if (scenario.abortAt !== moment || abortedAt !== undefined) return
      abortedAt = performance.now()
      controller.abort()
    }
    const recorder = recordingTransport(api.url, (entry, response) => {
      if (entry.api && entry.step === 'POST /') abort('api-sent')
      if (entry.step === 'POST ?uploads') abort('create-sent')
      if (entry.step === 'PUT') abort('single-put-sent')
      const completing = entry.step === 'POST ?uploadId' || entry.step === 'POST /complete'
      if (completing) abort('complete-sent')
      void response?.then(
        () => {
          if (entry.api && entry.step === 'POST /' && entry.status === 200) usedKey = JSON.parse(entry.reply!).key
          if (entry.step === 'POST ?uploads' && entry.status === 200) abort('create-answered')
          if (entry.step === 'PUT ?partNumber' && entry.status === 200) abort('part-answered')
          if (entry.step === 'PUT' && entry.status === 200) abort('single-put-answered')
          if (completing && entry.status === 200) abort('complete-answered')
        },
        () => {},
      )
    })

    const startedAt = performance.now()
    let cleanedUp!: () => void
    const cleanupOver = new Promise<void>((resolve) => (cleanedUp = resolve))
    const started = upload(new File([bytes], 'payload.bin', { type: 'application/octet-stream' }), {
      ...CAMPAIGN_OPTIONS,
      api: apiUrl,
      strategy: scenario.mode,
      apiBody: { run: runPrefix },
      transport: recorder.transport,
      leavePartsOnError: scenario.leavePartsOnError,
      retry: { ...CAMPAIGN_OPTIONS.retry, limit: MAX_ATTEMPTS - 1 },
      signal: controller.signal,
      onProgress: (event) => {
        progress.push(event)
        if (event.loaded >= scenario.size / 3 && scenario.size > MIN_PART_SIZE) abort('mid-part')
      },
      onRetry: () => void retries++,
      onCleanup: () => cleanedUp(),
    })

    const settled = await Promise.race([
      started.then(
        (result) => ({ result }),
        (error: unknown) => ({ error }),
      ),
      new Promise<'hung'>((resolve) => setTimeout(resolve, HANG_MS, 'hung')),
    ])
    const settledAt = performance.now()
    const faults = () => diff(storage.stats.faults, faultsBefore, api.stats.faults, apiFaultsBefore)
    if (settled === 'hung') {
      return {
        scenario,
        outcome: 'hung',
        retries,
        faults: faults(),
        orphans: 0,
        leftForSweep: 0,
        corrupt: false,
        violations: ['never settled'],
        serverLog: [...serverLog],
      }
    }
    const result = 'result' in settled ? (settled.result as UploadResult) : undefined
    const error = 'error' in settled ? settled.error : undefined

    // Everything the upload started, cleanup included, must end: onCleanup says when.
    const cleanupReported = await Promise.race([
      cleanupOver.then(() => true),
      new Promise<boolean>((resolve) => setTimeout(resolve, CAMPAIGN_OPTIONS.cleanupTimeout + 10_000, false)),
    ])
    if (!cleanupReported) violations.push('onCleanup was never called')

    if (error !== undefined && !isUploadError(error)) violations.push(`untyped error: ${String(error)}`)
    if (error instanceof Error && !error.message) violations.push(`error without a message: ${error.name}`)
    if (scenario.abortAt && abortedAt !== undefined && error && (error as Error).name !== 'AbortError') {
      violations.push(`aborted, but rejected with ${(error as Error).name}: ${(error as Error).message}`)
    }
    for (const entry of recorder.log) {
      if (entry.at > settledAt && !CLEANUP_STEPS.has(entry.step)) {
        violations.push(
          `${entry.step} reached the wire ${Math.round(entry.at - settledAt)} ms after the upload settled`,
        )
      }
    }
    violations.push(...retryViolations(recorder.log, MAX_ATTEMPTS))
    // The proxies fault the page's requests, never the upload API's own: a 500 of its own is a bug,
    // except on s3rver's /abort and /duplicates (it has neither AbortMultipartUpload nor
    // ListMultipartUploads: cleanup there is expected to fail).
    const ownFailures = serverLog.filter(
      (line) => !(scenario.store === 's3rver' && /^\/(abort|duplicates):/.test(line)),
    )
    violations.push(...ownFailures.map((line) => `the upload API failed: ${line}`))
    // Aborted once storage held the object, before the upload API's verdict: the bytes were all
    // stored (100% is true of them), and the upload ended with AbortError (issue 24).
    const abortedAfterCommit = abortedAt !== undefined && committedBeforeVerdict(recorder.log)
    violations.push(...progressViolations(progress, scenario.size, result !== undefined, abortedAfterCommit))

    let corrupt = false
    if (result) {
      usedKey = result.key
      corrupt = sha256(await bounded(readObject(admin, store.bucket, result.key), 'GetObject')) !== sha256(bytes)
      if (corrupt) violations.push('the object read back differs from the bytes sent')
    } else if (lists) {
      // The truth: a rejected upload left no object, unless an attempt of its final write had an
      // unknown outcome (no reply) and a later one was refused: then storage may hold it, unknowably.
      const objects = await listObjects(admin, store.bucket, runPrefix)
      if (objects.length > 0 && !unknowableWrite(recorder.log) && !abortedAfterCommit) {
        violations.push(`rejected, yet storage holds ${objects.join(', ')}`)
      }
    }

    let orphans = 0
    let leftForSweep = 0
    if (lists) {
      const uploads = await listUploads(admin, store.bucket, runPrefix)
      const onKey = uploads.filter((upload) => upload.Key === usedKey)
      orphans = scenario.leavePartsOnError ? Math.max(0, onKey.length - 1) : onKey.length
      leftForSweep = uploads.length - onKey.length
      if (orphans > 0) violations.push(`${orphans} multipart upload(s) left on ${usedKey}`)
      for (const upload of onKey) {
        if (orphans === 0) break
        const parts = await bounded(
          admin.send(new ListPartsCommand({ Bucket: store.bucket, Key: upload.Key, UploadId: upload.UploadId })),
          'ListParts',
        )
        violations.push(
          `left: ${upload.UploadId}, parts ${(parts.Parts ?? []).map((part) => part.PartNumber).join(', ')}`,
        )
      }
      // Only an upload request that reached the upload API and whose reply the page never read can
      // have created an upload the page never heard of (presigned mode, token mode's createMultipart):
      // at most one each. Anything more is an upload the engine lost track of.
      const unheardReplies = recorder.log.filter(
        (entry) => entry.api && entry.step === 'POST /' && entry.status === undefined,
      ).length
      if (leftForSweep > unheardReplies) {
        violations.push(
          `${leftForSweep} upload(s) left on other keys, but only ${unheardReplies} upload request(s) went unanswered`,
        )
      }
      for (const upload of uploads) {
        await bounded(
          admin.send(
            new AbortMultipartUploadCommand({ Bucket: store.bucket, Key: upload.Key, UploadId: upload.UploadId }),
          ),
          'AbortMultipartUpload',
        )
      }
    }
    if (result)
      await bounded(admin.send(new DeleteObjectCommand({ Bucket: store.bucket, Key: result.key })), 'DeleteObject')

    return {
      scenario,
      outcome: result ? 'success' : 'failure',
      error: error === undefined ? undefined : `${(error as Error).name}: ${(error as Error).message}`,
      retries,
      // Cleanup met faults too: counted once it is over.
      faults: faults(),
      abortToSettleMs: abortedAt === undefined ? undefined : settledAt - abortedAt,
      abortWhileCommitting: abortedAt === undefined ? undefined : COMMITTING_MOMENTS.has(scenario.abortAt!),
      orphans,
      leftForSweep,
      corrupt,
      violations,
      serverLog: [...serverLog],
      wire: violations.length
        ? recorder.log.map(
            (entry) => `${Math.round(entry.at - startedAt)} ${entry.step} ${entry.status ?? entry.failed}`,
          )
        : undefined,
    }
  }

  return {
    run,
    async stop() {
      await Promise.all(closers.map((close) => close()))
      await sts.stop()
      await s3rver.stop()
    },
  }
}

/** Monotonic, within [0, total], reaching total only on success (and then surely). */
function progressViolations(
  progress: Array<{ loaded: number; total: number }>,
  size: number,
  succeeded: boolean,
  abortedAfterCommit: boolean,
): string[] {
  const violations: string[] = []
  progress.forEach(({ loaded, total }, i) => {
    if (total !== size) violations.push(`progress total ${total}, not ${size}`)
    if (loaded < 0 || loaded > total) violations.push(`progress ${loaded} outside [0, ${total}]`)
    if (i > 0 && loaded < progress[i - 1]!.loaded)
      violations.push(`progress went back from ${progress[i - 1]!.loaded} to ${loaded}`)
  })
  const reached = progress.some(({ loaded }) => loaded === size)
  if (reached && !succeeded && !abortedAfterCommit) violations.push('progress reached the total, yet the upload failed')
  if (!reached && succeeded) violations.push('the upload succeeded, yet progress never reached the total')
  return violations
}

/**
 * Storage answered the page's final write (single PUT, CompleteMultipartUpload): an abort from
 * then on ends the upload without the upload API's verdict (issue 24), leaving the object stored
 * and unrecorded, for the app's reconciliation.
 */
const committedBeforeVerdict = (log: WireEntry[]) =>
  log.some(
    (entry) =>
      !entry.api && ['PUT', 'POST ?uploadId'].includes(entry.step) && entry.status !== undefined && entry.status < 300,
  )

/** The final write (single PUT or Complete) had an attempt with no reply: storage may have done it. */
const unknowableWrite = (log: WireEntry[]) =>
  log.some((entry) => ['PUT', 'POST ?uploadId', 'POST /complete'].includes(entry.step) && entry.failed !== undefined)

async function listUploads(admin: S3Client, bucket: string, prefix: string) {
  const listed = await bounded(
    admin.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: prefix })),
    'ListMultipartUploads',
  )
  return listed.Uploads ?? []
}

async function listObjects(admin: S3Client, bucket: string, prefix: string) {
  const listed = await bounded(
    admin.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix })),
    'ListObjectsV2',
  )
  return (listed.Contents ?? []).map((object) => object.Key!)
}

function diff(...counts: Array<Partial<Record<Fault, number>>>): Partial<Record<Fault, number>> {
  const [storageNow, storageBefore, apiNow, apiBefore] = counts
  const faults: Partial<Record<Fault, number>> = {}
  for (const [now, before] of [
    [storageNow, storageBefore],
    [apiNow, apiBefore],
  ] as const) {
    for (const [fault, count] of Object.entries(now!) as Array<[Fault, number]>) {
      const added = count - (before![fault] ?? 0)
      if (added) faults[fault] = (faults[fault] ?? 0) + added
    }
  }
  return faults
}
