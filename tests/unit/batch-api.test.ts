// Issue 34, item 1, step by step: the hooks' uploads ask for permission and confirm in batches
// (src/batch-api.ts, through the engine's `post` run hook), each file keeping its own errors,
// retries, abort and strategy. End to end against real stores and browsers: tests/many-files-browser.test.ts.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { ApiError, type UploadOptions, type UploadResult, upload } from '../../engine/index.ts'
import { BatchingPauseController } from '../../src/batch-api.ts'
import { type PendingRequest, stepThroughTransport } from '../helpers/fake-transport.ts'

type Answer = Record<string, unknown> & { error?: string; status?: number }

/**
 * A stand-in upload API and store answering whatever the engine sends, until every upload has
 * settled. `refuse(filename, attempt, strategy)` may answer a file's upload request with an error
 * entry; `batches: false` makes the API an older one (404 on the batch routes).
 */
function stand(
  options: {
    refuse?: (name: string, attempt: number, strategy: string) => Answer | undefined
    batches?: boolean
    putTicks?: (name: string) => number
    completeTicks?: (nth: number) => number
  } = {},
) {
  const fake = stepThroughTransport()
  const asked = new Map<string, number>()
  const ask = (body: { filename: string; strategy: string }): Answer => {
    const attempt = (asked.get(body.filename) ?? 0) + 1
    asked.set(body.filename, attempt)
    const refused = options.refuse?.(body.filename, attempt, body.strategy)
    if (refused) return refused
    return {
      key: `k/${body.filename}`,
      bucket: 'b',
      region: 'us-east-1',
      endpoint: 'https://store.test',
      url: `https://store.test/b/k/${body.filename}?X-Amz-Signature=s`,
      headers: { 'content-type': 'text/plain' },
      ticket: `ticket-${body.filename}`,
    }
  }
  const complete = (body: { ticket: string }): Answer => {
    const name = body.ticket.slice('ticket-'.length)
    return { url: `https://store.test/b/k/${name}`, bucket: 'b', key: `k/${name}`, etag: '"e"', serverData: { name } }
  }
  const held = new Map<PendingRequest, number>()
  const completes = new Map<PendingRequest, { nth: number; ticks: number }>()
  let mostCompletes = 0
  const json = (request: PendingRequest, status: number, reply: unknown) =>
    request.respond(status, {}, JSON.stringify(reply))
  const answer = (request: PendingRequest) => {
    mostCompletes = Math.max(mostCompletes, fake.pending.filter((pending) => pending.step.endsWith('complete')).length)
    const body = request.method === 'POST' ? JSON.parse(String(request.body)) : undefined
    const route = request.step.replace(/^POST /, '')
    const batch = route.startsWith('/batch')
    if (batch && options.batches === false) return json(request, 404, { error: 'Not Found' })
    if (route === '/') {
      const reply = ask(body)
      return json(request, reply.error ? (reply.status ?? 400) : 200, reply)
    }
    if (route === '/batch') return json(request, 200, { files: body.files.map(ask) })
    if (route === '/complete') return json(request, 200, complete(body))

    if (route === '/batch/complete') {
      if (!completes.has(request)) completes.set(request, { nth: completes.size + 1, ticks: 0 })
      const state = completes.get(request)!
      if (++state.ticks < (options.completeTicks?.(state.nth) ?? 0)) return
      return json(request, 200, { files: body.files.map(complete) })
    }
    if (request.method === 'PUT') {
      const name = request.url.split('?')[0]!.split('/').pop()!
      const ticks = (held.get(request) ?? 0) + 1
      held.set(request, ticks)
      if (ticks < (options.putTicks?.(name) ?? 0)) return
      return request.respond(200, { ETag: '"e"' })
    }
    throw new Error(`unexpected ${request.step}`)
  }
  /**
   * Answers until `all` settles, a tick (1 ms of fake time) at a time, so what arrives together is
   * answered together; the engine's gathering windows and retry delays pass in fake time.
   */
  async function serve<T>(all: Promise<T>): Promise<T> {
    let done = false
    const settled = all.finally(() => (done = true))
    while (!done) {
      await vi.advanceTimersByTimeAsync(1)
      for (const request of fake.pending.slice()) answer(request)
    }
    return settled
  }
  /** What was sent, in order: API routes by name, storage requests by method. */
  const steps = () => fake.log.map((step) => step.replace(/^POST /, ''))
  return { fake, serve, asked, steps, mostCompletes: () => mostCompletes }
}

// Fake time: the engine's windows (completions gather for up to 400 ms) pass without waiting.
beforeEach(() => {
  vi.useFakeTimers()
})
afterEach(() => {
  vi.useRealTimers()
})

let apis = 0
/** Each test its own API: what the page learns of one (no batch routes, no STS) is kept for the page's life. */
const newApi = () => `https://app-${++apis}.test/api/s3-upload`

const filesNamed = (...names: string[]) => names.map((name) => new File([name], name, { type: 'text/plain' }))

function start(files: File[], transport: UploadOptions['transport'], options: UploadOptions = {}) {
  return files.map((file) =>
    upload(file, {
      transport,
      strategy: 'presigned',
      retry: { delay: 1 },
      pauseSignal: new BatchingPauseController().signal,
      ...options,
    }),
  )
}

const outcomes = (uploads: Array<Promise<UploadResult>>) =>
  Promise.all(
    uploads.map((upload) =>
      upload.then(
        (result) => result.key,
        (error: Error) => `${error.name}: ${error.message}`,
      ),
    ),
  )

describe('batches of the hooks’ uploads', () => {
  it('files started together are asked for in one /batch and confirmed in one /batch/complete, each with its own reply and result', async () => {
    const { fake, serve, steps } = stand()
    const uploads = start(filesNamed('a', 'b', 'c'), fake.transport, { api: newApi() })
    const results = await serve(Promise.all(uploads))
    expect(results.map((result) => [result.key, result.serverData])).toEqual([
      ['k/a', { name: 'a' }],
      ['k/b', { name: 'b' }],
      ['k/c', { name: 'c' }],
    ])
    expect(steps()).toEqual(['/batch', 'PUT', 'PUT', 'PUT', '/batch/complete'])
  })

  it('a file that finishes while others still send waits briefly to confirm with them: one /batch/complete, not one each', async () => {
    const { fake, serve, steps } = stand({ putTicks: (name) => (name === 'b' ? 20 : 0) })
    const uploads = start(filesNamed('a', 'b'), fake.transport, { api: newApi() })
    expect(await serve(outcomes(uploads))).toEqual(['k/a', 'k/b'])
    expect(steps()).toEqual(['/batch', 'PUT', 'PUT', '/batch/complete'])
  })

  it('a /batch/complete that gets no reply does not hold the completions of files that finish after it', async () => {
    const { fake, serve, mostCompletes } = stand({
      putTicks: (name) => (name === 'c' ? 700 : 0),
      completeTicks: (nth) => (nth === 1 ? 1500 : 0),
    })
    const uploads = start(filesNamed('a', 'b', 'c'), fake.transport, { api: newApi() })
    expect(await serve(outcomes(uploads))).toEqual(['k/a', 'k/b', 'k/c'])
    // c's completion (alone: the one-file form) went while a and b's batch was still unanswered.
    expect(mostCompletes()).toBe(2)
  })

  it('one refused file fails alone with the server’s words; one throttled (429, retryAfter) is asked again and stored', async () => {
    const { fake, serve, asked, steps } = stand({
      refuse: (name, attempt) =>
        name === 'page.html'
          ? { error: 'filetype not allowed', status: 415 }
          : name === 'b' && attempt === 1
            ? { error: 'Too many requests', status: 429, retryAfter: 0 }
            : undefined,
    })
    const uploads = start(filesNamed('a', 'page.html', 'b'), fake.transport, { api: newApi() })
    expect(await serve(outcomes(uploads))).toEqual(['k/a', 'ApiError: filetype not allowed', 'k/b'])
    await expect(uploads[1]).rejects.toMatchObject({ status: 415 })
    expect(asked.get('b')).toBe(2)
    expect(steps().filter((step) => step.startsWith('/batch'))[0]).toBe('/batch')
  })

  it('an API without batch routes (404) gets each file in the one-file form, and this page asks it so from then on', async () => {
    const api = newApi()
    const { fake, serve, steps } = stand({ batches: false })
    expect(await serve(outcomes(start(filesNamed('a', 'b'), fake.transport, { api })))).toEqual(['k/a', 'k/b'])
    expect(steps().filter((step) => step.startsWith('/batch'))).toEqual(['/batch'])
    const later = stand({ batches: false })
    expect(await later.serve(outcomes(start(filesNamed('c', 'd'), later.fake.transport, { api })))).toEqual([
      'k/c',
      'k/d',
    ])
    expect(later.steps().filter((step) => step.startsWith('/batch'))).toEqual([])
    expect(later.steps().filter((step) => step === '/')).toHaveLength(2)
  })

  it('token mode by default; where the API has no STS the first file learns it alone, and all go presigned in one batch', async () => {
    const { fake, serve } = stand({
      refuse: (_, __, strategy) =>
        strategy === 'token' ? { error: 'no STS', code: 'TokenModeUnavailable', status: 400 } : undefined,
    })
    const asked: string[] = []
    const transport: UploadOptions['transport'] = (request) => {
      const { pathname } = new URL(request.url)
      if (pathname.endsWith('/batch'))
        asked.push(
          `batch: ${JSON.parse(String(request.body))
            .files.map((file: { strategy: string }) => file.strategy)
            .join(' ')}`,
        )
      else if (request.method === 'POST' && !/\/(complete|batch\/complete)$/.test(pathname))
        asked.push(`alone: ${JSON.parse(String(request.body)).strategy}`)
      return fake.transport(request)
    }
    const uploads = start(filesNamed('a', 'b', 'c'), transport, { api: newApi(), strategy: undefined })
    expect(await serve(outcomes(uploads))).toEqual(['k/a', 'k/b', 'k/c'])
    // The others waited for the first's answer (engine/modes/default-strategy.ts) rather than each being refused.
    expect(asked).toEqual(['alone: token', 'batch: presigned presigned presigned'])
  })

  it('a file aborted while its batch waits to go is left out of it, and ends as aborted', async () => {
    const { fake, serve, asked, steps } = stand()
    const controller = new AbortController()
    const api = newApi()
    const [kept, gone, other] = [
      ...start(filesNamed('a'), fake.transport, { api }),
      ...start(filesNamed('b'), fake.transport, { api, signal: controller.signal }),
      ...start(filesNamed('c'), fake.transport, { api }),
    ]
    controller.abort()
    expect(await serve(outcomes([kept!, gone!, other!]))).toEqual(['k/a', 'AbortError: Upload aborted', 'k/c'])
    expect(steps()[0]).toBe('/batch')
    expect(asked.has('b')).toBe(false)
  })

  it('a batch the API fails (502) is retried per file, by each file’s own policy (onRetry hears it)', async () => {
    const { fake, serve } = stand()
    let failed = 0
    const transport: UploadOptions['transport'] = (request) => {
      if (request.url.endsWith('/batch') && failed++ === 0)
        return Promise.resolve({ status: 502, header: () => null, body: 'Bad gateway' })
      return fake.transport(request)
    }
    const retried: unknown[] = []
    const uploads = start(filesNamed('a', 'b'), transport, {
      api: newApi(),
      onRetry: ({ error }) => retried.push(error),
    })
    expect(await serve(outcomes(uploads))).toEqual(['k/a', 'k/b'])
    expect(retried).toHaveLength(2)
    expect(retried[0]).toBeInstanceOf(ApiError)
  })
})
