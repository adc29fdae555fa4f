// Issue 9: a deliberate public API. Every export of every package entry is documented, the main
// functions carry an example and say what they throw, and no entry hands out a mutable default
// (a caller changing it would change every other caller's behaviour). The API reports
// (api/*.api.md, `npm run api -- --check`) pin the surface itself.
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ROOT } from '../../scripts/build.ts'
import { publicExportDocs, publicExports } from '../helpers/public-exports.ts'

const docs = publicExportDocs()

/** The functions a user starts from: each shows how it is called, and what it throws. */
const MAIN_FUNCTIONS = [
  'upload',
  'uploadObject',
  'uploadWithToken',
  'uploadPresigned',
  'createUploadHandler',
  'createUploadSweeper',
  's3Upload',
  'useS3Upload',
  'useS3Dropzone',
  'UploadDropzone',
  'UploadButton',
]

describe('public API', () => {
  it('documents every export', () => {
    const undocumented = docs
      .filter(({ text }) => text.trim().length < 10)
      .map(({ specifier, name, at }) => `${specifier} ${name} (${at})`)
    expect(undocumented).toEqual([])
  })

  it('gives the main functions an example, and says what they throw', () => {
    for (const name of MAIN_FUNCTIONS) {
      const doc = docs.find((entry) => entry.name === name)
      expect(doc, name).toBeDefined()
      expect(doc!.tags, `${name}: @example`).toContain('example')
      // Hooks and components throw nothing: they say so, and what their promises reject with.
      if (doc!.tags.includes('throws')) continue
      expect(doc!.text, `${name}: @throws, or a plain "never throws"`).toMatch(/never throws/i)
    }
  })

  it('hands out no mutable object', async () => {
    const mutable: string[] = []
    for (const { specifier, source, values } of publicExports()) {
      const module = (await import(join(ROOT, source))) as Record<string, unknown>
      for (const name of values) {
        const value = module[name]
        // React components made by forwardRef are objects too: React's, not configuration.
        const component = typeof value === 'object' && value !== null && '$$typeof' in value
        if (typeof value === 'object' && value !== null && !component && !Object.isFrozen(value))
          mutable.push(`${specifier} ${name}`)
      }
    }
    expect(mutable).toEqual([])
  })
})
