import { RequestError } from './request-error.ts'

// Every call the upload API makes through the AWS SDK has a bound (issue 33): a credentials source,
// an STS or a store that accepts the connection and never answers held the page's request forever
// (the SDK's `requestTimeout` only logs a warning unless told to throw, and its credential
// providers memoize the promise that never settles). Each is now answered with a 503 naming what
// did not answer, and the next request asks again.

/** Milliseconds the upload API waits on each thing it calls (`UploadHandlerConfig.timeouts`). */
export interface Timeouts {
  /** Resolving the server's own credentials when they are not a static key (container endpoint, instance metadata, web identity, SSO, a provider given): the whole resolution. @default 5000 */
  credentials?: number
  /** Each attempt of an STS call (AssumeRole, GetFederationToken), until its reply starts; the SDK makes at most 3. @default 5000 */
  sts?: number
  /** Each attempt of a storage call (CreateMultipartUpload, Complete, HEAD, …), until its reply starts; the SDK makes at most 3. @default 10000 */
  storage?: number
}

export const DEFAULT_TIMEOUTS: Required<Timeouts> = Object.freeze({ credentials: 5_000, sts: 5_000, storage: 10_000 })

/** What the upload API waited on, and for how long, said to the page (503) and to the log. */
export class NotAnsweredError extends RequestError {
  override name = 'NotAnsweredError'
  /** What did not answer: "Storage", "STS", "The server's credentials source (…)". */
  readonly what: string

  constructor(what: string, ms: number) {
    super(503, `${what} did not answer within ${ms} ms: the upload API cannot go on without it; try again in a moment`)
    this.what = what
  }
}

/** The SDK's HTTP handler options: a reply must start within `ms`, and a late one is an error (TimeoutError), not a warning. */
export const boundedRequests = (ms: number) => ({
  connectionTimeout: Math.min(ms, 5_000),
  requestTimeout: ms,
  throwOnRequestTimeout: true,
})

/**
 * A middleware for an SDK client whose requests are `boundedRequests(ms)`: once the SDK's own
 * retries are spent, a timeout leaves the client as a {@link NotAnsweredError} naming `what`, and
 * any other failure is marked as `what`'s ({@link failedAt}). Add it outermost:
 * `client.middlewareStack.add(namingTimeouts(what, ms), NAMING_TIMEOUTS)`.
 */
export const namingTimeouts =
  (what: string, ms: number) =>
  <Args, Output>(next: (args: Args) => Promise<Output>) =>
  async (args: Args): Promise<Output> => {
    try {
      return await next(args)
    } catch (error) {
      if (isTimeout(error)) throw Object.assign(new NotAnsweredError(what, ms), { cause: error })
      // A connection refused has no $metadata saying whose it was: server/config-faults.ts asks here.
      if (error instanceof Error) calls.set(error, what)
      throw error
    }
  }

const calls = new WeakMap<Error, string>()

/** What an SDK error came from ("Storage", "STS"), when a {@link namingTimeouts} client threw it. */
export const failedAt = (error: unknown): string | undefined => (error instanceof Error ? calls.get(error) : undefined)

/** Outermost (`initialize`), so it sees only the final error, after the SDK's retries. */
export const NAMING_TIMEOUTS = { step: 'initialize', name: 'updraftNamingTimeouts', priority: 'high' } as const

/** The SDK's own timeouts: its handler's TimeoutError (connection, request, socket) or a Node timeout code. */
const isTimeout = (error: unknown) =>
  error instanceof Error &&
  (error.name === 'TimeoutError' || ['ETIMEDOUT', 'ESOCKETTIMEDOUT'].includes((error as { code?: string }).code ?? ''))
