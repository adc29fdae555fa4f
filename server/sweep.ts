import { ListMultipartUploadsCommand, type S3Client } from '@aws-sdk/client-s3'
import { type ResolvedConfig, resolveConfig, type UploadHandlerConfig } from './config.ts'
import { abortUpload } from './multipart.ts'
import { type RedisClient, takeLock } from './redis.ts'
import { createS3Client } from './storage.ts'

/** Options of one sweep (the function {@link createUploadSweeper} returns). */
export interface SweepOptions {
  /** Uploads started before `now - olderThanSeconds` are aborted. @default Date.now() */
  now?: number
  /** @default config.ticketTtlSeconds: by then no ticket can complete the upload */
  olderThanSeconds?: number
}

/** How {@link createUploadSweeper}'s sweeps are shared by several instances. */
export interface SweeperOptions {
  /**
   * Several instances sweeping on the same schedule: with a Redis they share, one sweep per
   * `periodSeconds` runs across all of them (a lock with that expiry); the others answer
   * `{ skipped: true }` at once. Redis down or slow (over 1 s): every instance sweeps, which is
   * harmless (an upload aborted twice is simply gone) but lists the bucket once per instance.
   */
  lock?: { redis: RedisClient; periodSeconds: number }
}

/** What one sweep did. */
export interface SweepReport {
  /** Another instance swept within the period (`SweeperOptions.lock`): this one did nothing. */
  skipped: boolean
  /** Pending multipart uploads under keyPrefix that were aborted. */
  aborted: number
  /** Pending ones left alone because they are younger than the cut-off. */
  kept: number
}

/** At most this many pages of 1000 uploads per sweep: a sweep ends, whatever the bucket holds. */
const MAX_PAGES = 100

/**
 * Aborts the multipart uploads the upload API started and nobody finished: those under `keyPrefix`
 * older than the ticket lifetime (their tickets have expired, so /complete can no longer finish
 * them). Each one left holds its parts' storage, billed, until aborted. Run it on a schedule
 * (the Fastify plugin's `sweepEverySeconds`, a cron job), or let the bucket do it with a lifecycle
 * rule (docs/security.md). Needs `s3:ListBucketMultipartUploads` on the bucket; s3rver has no
 * ListMultipartUploads and fails here with its own error.
 *
 * @param config - The handler's config (the same `keyPrefix`, `ticketTtlSeconds` and store); what
 * is left out comes from `S3_UPLOAD_*`.
 * @returns A function running one sweep, which resolves with what it did.
 * @throws `TypeError` (from `createUploadSweeper`) when a required setting is missing or invalid,
 * as `createUploadHandler` does. The sweep itself rejects with the AWS SDK's error (`S3ServiceException`:
 * `AccessDenied` without `s3:ListBucketMultipartUploads` / `s3:AbortMultipartUpload`, `NoSuchBucket`, …).
 * @example
 * ```ts
 * import { createUploadSweeper } from 'updraft-s3/server'
 *
 * const sweep = createUploadSweeper()
 * setInterval(() => sweep().then(({ aborted }) => aborted && console.log(`swept ${aborted} stale uploads`), console.error), 3600_000)
 * ```
 */
export function createUploadSweeper(
  config?: UploadHandlerConfig,
  { lock }: SweeperOptions = {},
): (options?: SweepOptions) => Promise<SweepReport> {
  const resolved = resolveConfig(config)
  const s3 = createS3Client(resolved)
  const turn = lock ? sweepTurn(resolved, lock) : undefined
  return async (options) =>
    (await turn?.()) === false ? { skipped: true, aborted: 0, kept: 0 } : sweepStaleUploads(resolved, s3, options)
}

/**
 * Whether this instance sweeps now: it took the lock for this bucket and prefix, which lasts 90%
 * of a period (so the holder's own next turn finds it free). Redis unreachable: yes, logged.
 */
export function sweepTurn(
  config: ResolvedConfig,
  { redis, periodSeconds }: NonNullable<SweeperOptions['lock']>,
): () => Promise<boolean> {
  const key = `updraft:sweep:${config.bucket}/${config.keyPrefix}`
  const holder = crypto.randomUUID()
  return () =>
    takeLock(redis, key, holder, Math.floor(periodSeconds * 900), 1000).catch((error: unknown) => {
      config.logger.error(
        { err: String(error) },
        'updraft: the sweep lock could not reach Redis; sweeping anyway (an upload aborted twice is simply gone)',
      )
      return true
    })
}

export async function sweepStaleUploads(
  config: ResolvedConfig,
  s3: S3Client,
  { now = Date.now(), olderThanSeconds = config.ticketTtlSeconds }: SweepOptions = {},
): Promise<SweepReport> {
  const cutoff = now - olderThanSeconds * 1000
  const report: SweepReport = { skipped: false, aborted: 0, kept: 0 }
  let markers: { KeyMarker?: string; UploadIdMarker?: string } = {}
  for (let page = 0; page < MAX_PAGES; page++) {
    const listed = await s3.send(
      new ListMultipartUploadsCommand({ Bucket: config.bucket, Prefix: config.keyPrefix, ...markers }),
    )
    for (const upload of listed.Uploads ?? []) {
      if (!upload.Key || !upload.UploadId || !upload.Initiated || upload.Initiated.getTime() > cutoff) {
        report.kept++
        continue
      }
      // Completed or aborted since the listing counts as aborted: gone either way.
      await abortUpload(s3, config.bucket, upload.Key, upload.UploadId)
      report.aborted++
    }
    if (!listed.IsTruncated) break
    markers = { KeyMarker: listed.NextKeyMarker, UploadIdMarker: listed.NextUploadIdMarker }
  }
  return report
}
