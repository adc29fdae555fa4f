import { DEFAULT_ENDPOINT } from '../../protocol/wire.ts'
import { ApiError } from '../core/errors.ts'
import type { StrategyChoice, UploadOptions } from './request.ts'

/**
 * Upload APIs this page has heard answer `TokenModeUnavailable` (no STS: the embedded dev store,
 * R2, B2): uploads that name no strategy go to them presigned at once, for the page's life.
 */
const presignedOnly = new Set<string>()

/**
 * `upload()`'s strategy: the one named, else token mode, the protocol's default — or presigned
 * for an API this page knows has no STS, and after such an API refuses token mode (one extra
 * round trip, once per page). Headers only token mode can carry (`objectHeaders`, `partHeaders`:
 * SSE-C, tags) keep token mode, and its refusal; a named `'token'` is never changed.
 */
export const defaultStrategy: StrategyChoice = {
  start(options) {
    const strategy = options.strategy ?? (mayChoose(options) && presignedOnly.has(apiOf(options)) ? 'presigned' : 'token')
    // The API signs every header in presigned mode: extra ones (SSE-C, tags) would be dropped silently.
    if (strategy === 'presigned' && (options.objectHeaders || options.partHeaders)) {
      throw new TypeError("updraft: objectHeaders and partHeaders (SSE-C, tags) need strategy: 'token'")
    }
    return strategy
  },
  refused(error, run) {
    if (!(error instanceof ApiError && error.code === 'TokenModeUnavailable' && mayChoose(run.options))) return false
    presignedOnly.add(apiOf(run.options))
    run.strategy = 'presigned'
    return true
  },
}

const mayChoose = (options: UploadOptions) => !options.strategy && !options.objectHeaders && !options.partHeaders

const apiOf = (options: UploadOptions) => options.api ?? DEFAULT_ENDPOINT
