// The React entries' surface: every name they export is theirs. The engine's errors, results and
// options are imported from `updraft-s3` (a React page writes two imports, not two copies of each
// name), and no test seam reaches the public types. api/updraft-s3-react*.api.md pin the rest.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ROOT } from '../../scripts/build.ts'
import { publicExports } from '../helpers/public-exports.ts'

const entries = publicExports()
const REACT = ['updraft-s3/react', 'updraft-s3/react/ui']
const namesOf = (specifier: string) => {
  const entry = entries.find((candidate) => candidate.specifier === specifier)
  if (!entry) throw new Error(`no entry ${specifier} in package.json exports`)
  return [...entry.values, ...entry.types]
}

describe('the React entries', () => {
  it.each(REACT)('%s exports no name another entry exports', (specifier) => {
    const others = new Map<string, string[]>()
    for (const other of entries.filter((entry) => entry.specifier !== specifier)) {
      for (const name of [...other.values, ...other.types]) others.set(name, [...(others.get(name) ?? []), other.specifier])
    }
    const shared = namesOf(specifier)
      .filter((name) => others.has(name))
      .map((name) => `${name} (also ${others.get(name)!.join(', ')})`)
    expect(shared).toEqual([])
  })

  it('has one upload hook, presigned by default (usePresignedUpload was the same hook with another default)', () => {
    const names = namesOf('updraft-s3/react')
    expect(names).toContain('useS3Upload')
    expect(names).not.toContain('usePresignedUpload')
  })

  // The generated reports are what a user's editor shows: the tests' uploader and the hidden
  // input's test id were in them before.
  it.each(['updraft-s3-react.api.md', 'updraft-s3-react-ui.api.md'])('%s names no test seam', (report) => {
    const text = readFileSync(join(ROOT, 'api', report), 'utf8')
    expect(text).not.toMatch(/\buploader\?:|'data-testid'|\bUploader\b/)
  })
})
