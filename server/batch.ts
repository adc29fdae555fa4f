import type { BatchError } from '../protocol/wire.ts'
import { mapWithin } from './bounded-map.ts'
import type { Logger } from './config.ts'
import { errorLogFields } from './error-log-fields.ts'
import { RequestError, ThrottledError } from './request-error.ts'
import type { Route } from './routes.ts'

/**
 * The files of one batch request answered at once, at most this many at a time. Each file makes a
 * few storage or STS requests (tens of ms each on a real network) and may call `onUploadComplete`:
 * 8 at a time answers 100 files in ~13 rounds rather than 100, while one batch leaves most of the
 * server S3 client's 50 sockets, and the app's database, to other requests.
 */
export const BATCH_CONCURRENCY = 8

/** How many files of a batch the rate limit lets through now (the first ones), and how long the rest wait. */
export interface FileAllowance {
  allowed: number
  /** Seconds; 0 when every file is allowed. */
  retryAfter: number
}

/**
 * A batch's reply: each entry answered by `answerOne`, as its one-file route would answer it, in
 * the request's order. A refusal (`RequestError`) becomes that entry's {@link BatchError}; any
 * other failure is logged and becomes a 500 entry, as the one-file route's fault is a 500; files
 * past the rate limit's allowance are refused with 429 and never looked at.
 */
export async function answerBatch<Answer>(
  entries: readonly unknown[],
  allowance: FileAllowance,
  route: Route,
  logger: Logger,
  answerOne: (entry: unknown) => Promise<Answer>,
): Promise<{ files: Array<Answer | BatchError> }> {
  const files = await mapWithin(BATCH_CONCURRENCY, entries, async (entry, index): Promise<Answer | BatchError> => {
    if (index >= allowance.allowed) return batchError(new ThrottledError(allowance.retryAfter))
    try {
      return await answerOne(entry)
    } catch (error) {
      if (error instanceof RequestError) return batchError(error)
      logger.error({ err: errorLogFields(error), route, file: index }, 'updraft: upload API failed')
      return { error: 'Internal Server Error', status: 500 }
    }
  })
  return { files }
}

function batchError(error: RequestError): BatchError {
  return {
    error: error.message,
    ...(error.code && { code: error.code }),
    status: error.status,
    ...(error instanceof ThrottledError && { retryAfter: error.seconds }),
  }
}

/**
 * Allowances of several limits (the `throttle` option, the Fastify plugin's `rateLimit`) as one:
 * a file goes when every limit lets it; the rest wait for the slowest.
 */
export function combineAllowances(...allowances: FileAllowance[]): FileAllowance {
  return {
    allowed: Math.min(...allowances.map((allowance) => allowance.allowed)),
    retryAfter: Math.max(0, ...allowances.map((allowance) => allowance.retryAfter)),
  }
}

/**
 * Charges a limit once per file, `count` times, one after another, until it refuses one: how many
 * it allowed, and the wait it asked for. One after another, because a counter answers each charge
 * with its count after that charge (@fastify/rate-limit's in-memory store hands every caller the
 * same record, so charges made together all read the last count); and not past the first refusal,
 * since within a window a count only grows.
 */
export async function chargeFiles(charge: () => Promise<number | undefined>, count: number): Promise<FileAllowance> {
  for (let allowed = 0; allowed < count; allowed++) {
    const wait = await charge()
    if (wait !== undefined && wait > 0) return { allowed, retryAfter: wait }
  }
  return { allowed: count, retryAfter: 0 }
}
