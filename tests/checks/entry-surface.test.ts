// The package's surface, entry by entry: every name is exported by one entry only (a React page
// writes two imports, not two copies of a name), the root entry holds what a page calls and no
// more, and no internal member reaches the published typings. api/*.api.md pin each entry whole.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ROOT } from '../../scripts/build.ts'
import { publicExports } from '../helpers/public-exports.ts'

const entries = publicExports()

/**
 * The agreed root entry (`updraft-s3`): the two upload functions, pause and resume, the errors and
 * their guard, the connection budget, the transports a page may pass, and the types that name
 * options and results. A name added here is a decision; one added to engine/index.ts alone fails.
 */
const ROOT_ENTRY = [
  'ApiError',
  'ApiOptions',
  'BodyError',
  'CredentialSource',
  'Credentials',
  'HttpRequest',
  'HttpResponse',
  'NetworkError',
  'ObjectExtras',
  'ObjectLocation',
  'ObjectTarget',
  'PauseController',
  'PauseSignal',
  'Progress',
  'Queue',
  'ResumeOptions',
  'ResumeRecord',
  'ResumeStore',
  'ResumeUploads',
  'RetryEvent',
  'RetryOptions',
  'S3Error',
  'TransferOptions',
  'Transport',
  'UploadAbortedError',
  'UploadBody',
  'UploadError',
  'UploadOptions',
  'UploadResult',
  'UploadState',
  'createQueue',
  'fetchTransport',
  'isUploadError',
  'resumeUploads',
  'upload',
  'uploadObject',
  'xhrTransport',
]

const namesOf = (specifier: string) => {
  const entry = entries.find((candidate) => candidate.specifier === specifier)
  if (!entry) throw new Error(`no entry ${specifier} in package.json exports`)
  return [...entry.values, ...entry.types].sort()
}

describe('the entries', () => {
  it('export each name from one entry only', () => {
    const owners = new Map<string, string[]>()
    for (const { specifier, values, types } of entries) {
      for (const name of [...values, ...types]) owners.set(name, [...(owners.get(name) ?? []), specifier])
    }
    const shared = [...owners]
      .filter(([, specifiers]) => specifiers.length > 1)
      .map(([name, specifiers]) => `${name}: ${specifiers.join(', ')}`)
    expect(shared).toEqual([])
  })

  it('the root entry is the agreed surface, no more and no less', () => {
    expect(namesOf('updraft-s3')).toEqual([...ROOT_ENTRY].sort())
  })

  it('the one-mode entries export their function alone', () => {
    expect(namesOf('updraft-s3/token')).toEqual(['uploadWithToken'])
    expect(namesOf('updraft-s3/presigned')).toEqual(['uploadPresigned'])
  })

  it('the wire types live in updraft-s3/protocol', () => {
    expect(namesOf('updraft-s3/protocol')).toEqual(
      expect.arrayContaining(['UploadRequest', 'TokenReply', 'PresignedReply', 'CompleteRequest', 'InfoReply']),
    )
  })

  // The reports are what a user's editor shows: the pause signal's watcher and the resume option's
  // runner are the engine's business (stripInternal keeps `@internal` members out of the typings).
  it('no report shows an internal member or a test seam', () => {
    for (const { specifier } of entries) {
      const report = `${specifier.replace(/\//g, '-')}.api.md`
      const text = readFileSync(join(ROOT, 'api', report), 'utf8')
      expect(text, report).not.toMatch(/@internal|\bgate\(|\buploader\?:|'data-testid'/)
    }
  })
})
