import { DEFAULT_API_PATH, type Strategy } from '../../protocol/wire.ts'
import { ApiError } from '../core/errors.ts'
import type { StrategyChoice, UploadOptions } from './request.ts'

/**
 * Per upload API, what the page learned of token mode from an upload that named no strategy:
 * `'presigned'` once it answered `TokenModeUnavailable` (no STS: the embedded dev store, R2, B2),
 * so later uploads go presigned at once for the page's life; `'token'` once it granted it; and
 * while its first token-mode request is answered, that answer to come: uploads that start meanwhile
 * wait for it, so files started together learn from one request rather than each being refused.
 */
const learned = new Map<string, Strategy | Promise<unknown>>()

/**
 * `upload()`'s strategy: the one named, else token mode, the protocol's default — or presigned
 * for an API this page knows has no STS, and after such an API refuses token mode (one extra
 * round trip, once per page). Headers only token mode can carry (`objectHeaders`, `partHeaders`:
 * SSE-C, tags) keep token mode, and its refusal; a named `'token'` is never changed.
 */
export const defaultStrategy: StrategyChoice = {
  start(options) {
    const strategy =
      options.strategy ?? (mayChoose(options) && learned.get(apiOf(options)) === 'presigned' ? 'presigned' : 'token')
    // The API signs every header in presigned mode: extra ones (SSE-C, tags) would be dropped silently.
    if (strategy === 'presigned' && (options.objectHeaders || options.partHeaders)) {
      throw new TypeError("updraft: objectHeaders and partHeaders (SSE-C, tags) need strategy: 'token'")
    }
    return strategy
  },
  async request(run, ask) {
    if (!mayChoose(run.options)) return ask()
    const api = apiOf(run.options)
    let known: Strategy | Promise<unknown> | undefined
    while (typeof (known = learned.get(api)) === 'object') await known
    if (known === 'presigned') run.strategy = 'presigned'
    const asking = ask()
    // The first to ask: the others learn from its answer (a failure that is no refusal teaches nothing).
    if (!known)
      learned.set(
        api,
        asking.then(
          () => learned.set(api, 'token'),
          (error) => (refusesToken(error) ? learned.set(api, 'presigned') : learned.delete(api)),
        ),
      )
    try {
      return await asking
    } catch (error) {
      if (!refusesToken(error)) throw error
      learned.set(api, 'presigned')
      run.strategy = 'presigned'
      return ask()
    }
  },
}

const refusesToken = (error: unknown) => error instanceof ApiError && error.code === 'TokenModeUnavailable'

const mayChoose = (options: UploadOptions) => !options.strategy && !options.objectHeaders && !options.partHeaders

const apiOf = (options: UploadOptions) => options.api ?? DEFAULT_API_PATH
