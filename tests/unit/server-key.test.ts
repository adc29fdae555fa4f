// Object keys: the default key's sanitizing (next-s3-upload's rule minus path tricks and
// wildcards), custom key checks, and the token policy that names the key.
import fc from 'fast-check'
import { sanitizeKey as nextS3Sanitize } from 'next-s3-upload'
import { describe, expect, it } from 'vitest'
import { objectUrl } from '../../protocol/object-url.ts'
import { checkKey, defaultKey, sanitizeFilename } from '../../server/key.ts'
import { uploadPolicy } from '../../server/sts.ts'

const SAFE = /^[0-9a-zA-Z!_.'()-]+$/
const bytes = (text: string) => new TextEncoder().encode(text).length

describe('sanitizeFilename', () => {
  it.each([
    ['holiday photo (1).png', 'holiday-photo-(1).png'],
    ['  spaced   out  .txt', '-spaced-out-.txt'],
    ['../../etc/passwd', '.-.-etc-passwd'],
    ['..\\..\\boot.ini', '.-.-boot.ini'],
    ['a/b\\c', 'a-b-c'],
    ['wild*card?.jpg', 'wild-card-.jpg'],
    ['tab\tnew\nline\u0000nul.txt', 'tab-new-line-nul.txt'],
    ['résumé.pdf', 'r-sum-.pdf'],
    ['写真.jpeg', '-.jpeg'],
    ['..', 'file'],
    ['.', 'file'],
    ['...', 'file'],
    ['', 'file'],
    ['日本語', 'file'],
    ['\u0001\u0002', 'file'],
    ["it's (really) fine!_-.txt", "it's-(really)-fine!_-.txt"],
  ])('%j → %j', (input, expected) => {
    expect(sanitizeFilename(input)).toBe(expected)
  })

  it("equals next-s3-upload's sanitizeKey wherever that one leaves no path or wildcard", () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme-composite', maxLength: 60 }), (name) => {
        const theirs = nextS3Sanitize(name)
        fc.pre(!/[/\\*]|\.\./.test(theirs) && !['', '.', '-'].includes(theirs))
        expect(sanitizeFilename(name)).toBe(theirs)
      }),
      { numRuns: 500 },
    )
  })

  it('never lets a path separator, a dot segment, a control character or an empty name through', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 1200 }), (name) => {
        const safe = sanitizeFilename(name)
        expect(safe).toMatch(SAFE)
        expect(safe).not.toContain('..')
        expect(safe).not.toBe('.')
        expect(sanitizeFilename(safe)).toBe(safe)
        const key = defaultKey(name)
        expect(bytes(key)).toBeLessThanOrEqual(1024)
        expect(checkKey(key)).toBe(key)
        expect(() => objectUrl({ bucket: 'b', key, region: 'us-east-1' })).not.toThrow()
      }),
      { numRuns: 300 },
    )
  })

  it('keeps the extension when cutting a long name to 255 characters', () => {
    const key = defaultKey(`${'a'.repeat(3000)}.jpeg`)
    expect(key).toMatch(/^next-s3-uploads\/[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\/a+\.jpeg$/)
    expect(key.split('/').pop()).toHaveLength(255)
  })

  it('fits a long key prefix within 1024 bytes', () => {
    const prefix = `${'p'.repeat(500)}/`
    const key = defaultKey('x'.repeat(3000), prefix)
    expect(key.startsWith(prefix)).toBe(true)
    expect(bytes(key)).toBeLessThanOrEqual(1024)
  })

  it('gives every upload its own key', () => {
    expect(defaultKey('same.txt')).not.toBe(defaultKey('same.txt'))
  })
})

describe('checkKey (custom key callbacks)', () => {
  it.each([
    ['', /non-empty string/],
    [undefined, /non-empty string, got undefined/],
    [42, /non-empty string, got number/],
    ['k'.repeat(1025), /1025 bytes/],
    ['é'.repeat(513), /1026 bytes/],
    ['a/../b', /segments/],
    ['./a', /segments/],
    ['a/..', /segments/],
    ['a\\b', /'\\'/],
    ['line\nbreak', /control characters/],
  ])('refuses %j', (key, message) => {
    expect(() => checkKey(key)).toThrow(message)
  })

  it.each(['users/42/cv.pdf', 'a..b/c', 'deep/tree/of/folders/x', 'k'.repeat(1024)])('accepts %j', (key) => {
    expect(checkKey(key)).toBe(key)
  })
})

describe('uploadPolicy', () => {
  it('allows exactly PutObject and AbortMultipartUpload on the one key, and refuses public ACLs and grants', () => {
    const deny = (condition: object) => ({ Effect: 'Deny', Action: 's3:PutObject', Resource: '*', Condition: condition })
    expect(JSON.parse(uploadPolicy('uploads', 'next-s3-uploads/u/a.png'))).toEqual({
      Version: '2012-10-17',
      Statement: [
        { Effect: 'Allow', Action: ['s3:PutObject', 's3:AbortMultipartUpload'], Resource: ['arn:aws:s3:::uploads/next-s3-uploads/u/a.png'] },
        deny({ StringEquals: { 's3:x-amz-acl': ['public-read', 'public-read-write', 'authenticated-read'] } }),
        deny({ StringLike: { 's3:x-amz-grant-read': '*' } }),
        deny({ StringLike: { 's3:x-amz-grant-full-control': '*' } }),
        deny({ StringLike: { 's3:x-amz-grant-write-acp': '*' } }),
      ],
    })
  })

  it('stays under the ~1700 characters that crash Ceph 16.2 RGW, even for the longest default key', () => {
    const key = defaultKey('x'.repeat(5000))
    expect(uploadPolicy('a'.repeat(63), key).length).toBeLessThan(1300)
  })

  it('escapes IAM wildcards in custom keys, so they name one object', () => {
    const { Statement } = JSON.parse(uploadPolicy('b', 'a*b?c$d')) as { Statement: Array<{ Resource: string[] }> }
    expect(Statement[0]!.Resource).toEqual(['arn:aws:s3:::b/a${*}b${?}c${$}d'])
  })
})
