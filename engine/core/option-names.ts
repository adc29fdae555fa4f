// Development builds only: an option name an entry does not know is named once in a warning, and
// a renamed one with its new name (a misspelt or old name is otherwise ignored without a word).
// Each entry calls warnUnknownOptions inside
//   try { if (process.env.NODE_ENV !== 'production') warnUnknownOptions(…) } catch {}
// Bundlers replace `process.env.NODE_ENV`, so a production bundle drops the call and this module;
// the try keeps a page without a bundler (no `process`: a ReferenceError) silent and working.
import { defaultOptions, defaultRetry } from './options.ts'

/** The names before the renames (CHANGELOG.md, "Engine: one meaning per name"), each with its new name. */
const RENAMED: Record<string, string> = {
  endpoint: 'api',
  endpointHeaders: 'apiHeaders',
  headers: 'apiHeaders',
  endpointBody: 'apiBody',
  body: 'apiBody',
  maxAttempts: 'retry.limit', // which counts the retries after the first attempt: maxAttempts - 1
  retries: 'retry.limit',
  retryDelay: 'retry.delay',
  queueSize: 'partConcurrency',
  uploadHeaders: 'partHeaders',
  locate: 'resolveEndpoint',
  abortDuplicates: 'abortOtherUploads',
}

/** The entries that take options, by the name a warning gives them. */
export type OptionTaker = 'upload' | 'uploadWithToken' | 'uploadPresigned' | 'uploadObject'

/**
 * The options each entry knows. One place, built from the defaults objects (core/options.ts)
 * plus the fields without a default; tests/unit/option-names.test.ts checks each list against
 * the entry's option type, so an option added to one is added to the other.
 */
export function optionNames(entry: OptionTaker): Set<string> {
  const transfer = [
    ...Object.keys(defaultOptions),
    ...['size', 'leavePartsOnError', 'retry', 'signal', 'pauseSignal', 'waitForNetwork', 'transport', 'queue'],
    ...['onStateChange', 'onProgress', 'onRetry', 'onCleanup'],
    ...[...Object.keys(defaultRetry), 'shouldRetry'].map((name) => `retry.${name}`),
  ]
  const extras = ['objectHeaders', 'partHeaders', 'resolveEndpoint', 'checksum']
  const api = [
    'api',
    'apiHeaders',
    'apiBody',
    'metadata',
    'filename',
    'contentType',
    'resume',
    'fileHandle',
    'fingerprint',
  ]
  const object = [
    'bucket',
    'key',
    'region',
    'endpoint',
    'forcePathStyle',
    'credentials',
    'contentType',
    'cacheControl',
    'abortOtherUploads',
  ]
  return new Set(
    {
      upload: [...transfer, ...api, ...extras, 'strategy'],
      uploadWithToken: [...transfer, ...api, ...extras],
      // Presigned URLs are signed by the API: no headers of the page's own.
      uploadPresigned: [...transfer, ...api, 'resolveEndpoint', 'checksum'],
      uploadObject: [...transfer, ...extras, ...object],
    }[entry],
  )
}

/** Names already warned about: once per name, per page. */
const warned = new Set<string>()

export function warnUnknownOptions(entry: OptionTaker, options: object | undefined): void {
  const known = optionNames(entry)
  const { retry } = (options ?? {}) as { retry?: object }
  const given = [...Object.keys(options ?? {}), ...Object.keys(retry ?? {}).map((name) => `retry.${name}`)]
  for (const name of given) {
    if (known.has(name) || warned.has(name)) continue
    warned.add(name)
    const renamed = RENAMED[name]
    // A new name this entry does not take either (`endpointHeaders` to uploadObject) is not offered.
    const now = renamed && known.has(renamed) ? `; it is now '${renamed}'` : '; it is ignored'
    console.warn(`updraft: ${entry}() has no option '${name}'${now}`)
  }
}
