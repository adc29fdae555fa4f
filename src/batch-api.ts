import { ApiError, PauseController, PauseSignal, UploadAbortedError } from '../engine/index.ts'
import { MAX_BATCH_FILES } from '../protocol/limits.ts'
import { type BatchError, DEFAULT_API_PATH } from '../protocol/wire.ts'

// Many files in few API calls (issue 34): the hooks' uploads ask for permission and confirm through
// the batch routes (`/batch`, `/batch/complete`, docs/server.md "Batches"), without the engine or
// the caller doing anything. Each upload still runs its own engine: the run's `post` hook hands one
// attempt of its upload request or `/complete` to this module, which sends the attempts that arrive
// together as one request and answers each file from its entry. A refused entry is that file's
// ApiError, judged by the file's own retry policy (429 with `retryAfter`, 5xx retried), so per-file
// errors, retries, aborts and the fallback to presigned (`TokenModeUnavailable`) work as one by one.

type Hooks = ReturnType<PauseSignal['hooks']>
type Post = NonNullable<Hooks['post']>
type Run = Parameters<Post>[0]
type PostOnce = Parameters<Post>[3]

interface Entry {
  run: Run
  body: unknown
  resolve(reply: unknown): void
  reject(error: unknown): void
}

/** The attempts bound for one batch route of one API (with the same API headers), and its requests in flight. */
interface Group {
  /** The API and headers: which files' `transferring` count it reads. */
  api: string
  route: string
  batchRoute: string
  waiting: Entry[]
  sending: number
  timer?: ReturnType<typeof setTimeout>
  /** The timer waits GATHER_MS for more completions. */
  gathering?: boolean
}

/**
 * Completions in flight per API at once: those that finish meanwhile go together in the next. Two,
 * so one that gets no reply (until the stall watchdog's 20 s) does not hold every other file's: in
 * the 300-file browser test one did, and with one in flight nothing was confirmed, and no file
 * started, for those 20 s. Upload requests are bounded by the files the hook starts at once
 * (src/connection-budget.ts) instead.
 */
const COMPLETES_IN_FLIGHT = 2
/**
 * While other files of the API are still sending their bytes, a finished file waits up to this long
 * (or until this many wait) for others to confirm with it. bench/many-files.ts, 1000 files of 8–32
 * KiB: the hook's API requests per file (upload requests and completions) 0.14 → 0.10 at 30 ms RTT
 * and 0.07 on loopback with 400 ms / 50 files (was 150 ms / 20); the total time is not held up (the
 * last files never wait: nothing else sends then). Alone (nothing else sending), it goes at once.
 */
const GATHER_MS = 400
const GATHER_FILES = 50
/** Per API (and headers): files whose upload request was answered and that have not asked to complete yet. */
const transferring = new Map<string, number>()

/**
 * APIs that answered 404 (or 405) on a batch route: an older server or a next-s3-upload route.
 * Their files go one by one for the page's life, as engine/modes/default-strategy.ts remembers
 * APIs without token mode.
 */
const oneByOne = new Set<string>()
const groups = new Map<string, Group>()

const BATCH_ROUTES: Record<string, string> = { '': '/batch', '/complete': '/batch/complete' }

/** The run hook: an upload request or `/complete` joins its API's next batch; anything else is the engine's. */
export const batchPost: Post = (run, route, body, postOnce) => {
  const batchRoute = BATCH_ROUTES[route]
  const api = run.options.api ?? DEFAULT_API_PATH
  if (!batchRoute || oneByOne.has(api)) return undefined
  const apiKey = `${api} ${JSON.stringify(run.options.apiHeaders ?? {})}`
  const key = `${batchRoute} ${apiKey}`
  let group = groups.get(key)
  if (!group) groups.set(key, (group = { api: apiKey, route, batchRoute, waiting: [], sending: 0 }))
  // A file may fail while it sends and never ask to complete: the count only shortens waits, which GATHER_MS bounds.
  if (route === '/complete') transferring.set(apiKey, Math.max(0, (transferring.get(apiKey) ?? 0) - 1))
  const joined = group
  return new Promise((resolve, reject) => {
    joined.waiting.push({ run, body, resolve, reject })
    schedule(joined, postOnce)
  })
}

/**
 * Sends what waits: at once when a batch is full, else on the next task, so the files added,
 * retried or finished in one go travel together (a drop of 100 files makes one request).
 */
function schedule(group: Group, postOnce: PostOnce): void {
  const waiting = group.waiting.length
  const gather = group.route === '/complete' && waiting < GATHER_FILES && (transferring.get(group.api) ?? 0) > 0
  if (waiting >= MAX_BATCH_FILES || (group.gathering && !gather)) {
    clearTimeout(group.timer)
    group.timer = undefined
  }
  if (waiting >= MAX_BATCH_FILES) {
    flush(group, postOnce)
    return
  }
  group.gathering = gather
  group.timer ??= setTimeout(
    () => {
      group.timer = undefined
      flush(group, postOnce)
    },
    gather ? GATHER_MS : 0,
  )
}

function flush(group: Group, postOnce: PostOnce): void {
  const limit = group.route === '/complete' ? COMPLETES_IN_FLIGHT : Infinity
  while (group.waiting.length > 0 && group.sending < limit) {
    const entries = group.waiting.splice(0, MAX_BATCH_FILES).filter(stillWanted)
    if (entries.length === 0) continue
    group.sending++
    // `send` settles every entry and never rejects.
    void send(group, entries, postOnce).then(() => {
      group.sending--
      if (group.waiting.length > 0) schedule(group, postOnce)
    })
  }
}

/** An upload aborted while it waited is left out: the upload API creates nothing for it. */
function stillWanted(entry: Entry): boolean {
  if (!entry.run.options.signal?.aborted) return true
  entry.reject(new UploadAbortedError())
  return false
}

async function send(group: Group, entries: Entry[], postOnce: PostOnce): Promise<void> {
  // One file alone goes in the one-file form: a single upload never asks an older server for a route it lacks.
  if (entries.length === 1) return alone(group, entries[0]!, postOnce)
  const api = entries[0]!.run.options.api ?? DEFAULT_API_PATH
  let files: unknown[] | undefined
  try {
    // Sent as the first file's request (its transport, stall timeout, API and headers: the group's).
    // Not cancelled by any one file's abort: the others still want their answers.
    const reply = await postOnce<{ files?: unknown }>(
      entries[0]!.run,
      group.batchRoute,
      { files: entries.map((entry) => entry.body) },
      undefined,
    )
    if (Array.isArray(reply.files) && reply.files.length === entries.length) files = reply.files
  } catch (error) {
    if (!(error instanceof ApiError && (error.status === 404 || error.status === 405))) {
      // Each file's retry policy judges the failure (a network error or a 5xx is retried, in a later batch).
      for (const entry of entries) entry.reject(error)
      return
    }
  }
  if (!files) {
    // No batch routes here (404), or a reply that is no batch's: one by one, for the page's life.
    oneByOne.add(api)
    await Promise.all(entries.map((entry) => alone(group, entry, postOnce)))
    return
  }
  entries.forEach((entry, i) => {
    const answer = files[i] as Partial<BatchError> | null
    if (answer && typeof answer === 'object' && answer.error === undefined) {
      if (group.route === '') transferring.set(group.api, (transferring.get(group.api) ?? 0) + 1)
      entry.resolve(answer)
    } else entry.reject(refusal(answer))
  })
}

/** The one-file form, for a batch of one and for APIs without batches. */
function alone(group: Group, entry: Entry, postOnce: PostOnce): Promise<void> {
  // As the engine sends it: an upload request is never cancelled (its reply names what the upload API created).
  const signal = group.route === '' ? undefined : entry.run.options.signal
  return postOnce(entry.run, group.route, entry.body, signal).then(entry.resolve, entry.reject)
}

/** A file's refused entry as the ApiError the one-file route's reply would have made. */
function refusal(answer: Partial<BatchError> | null): ApiError {
  return new ApiError(
    String(answer?.error ?? 'Upload API answered a batch entry that is neither a reply nor an error'),
    typeof answer?.status === 'number' ? answer.status : 500,
    answer?.retryAfter === undefined ? null : String(answer.retryAfter),
    typeof answer?.code === 'string' ? answer.code : undefined,
  )
}

/** A pause signal whose runs ask and confirm through batches (the engine takes a run's hooks from its `pauseSignal`). */
class BatchingSignal extends PauseSignal {
  override hooks(options: Parameters<PauseSignal['hooks']>[0]): Hooks {
    return { ...super.hooks(options), post: batchPost }
  }
}

/** What the hooks pause each upload's engine with: also makes it ask and confirm in batches. */
export class BatchingPauseController extends PauseController {
  override readonly signal: PauseSignal = new BatchingSignal()
}
