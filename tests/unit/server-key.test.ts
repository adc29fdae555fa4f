// Object keys: the default key's sanitizing (next-s3-upload's rule minus path tricks and
// wildcards, plus the letters and digits of every script, and relative paths from folders),
// custom key checks, and the token policy that names the key.
import fc from 'fast-check'
import { sanitizeKey as nextS3Sanitize } from 'next-s3-upload'
import { describe, expect, it } from 'vitest'
import { objectUrl } from '../../protocol/object-url.ts'
import { resolveConfig } from '../../server/config.ts'
import { checkKey, defaultKey, sanitizeFilename, sanitizePath } from '../../server/key.ts'
import { uploadPolicy } from '../../server/sts.ts'

/** Letters, combining marks and digits of any script, and next-s3-upload's `! _ . ' ( ) -`. */
const SAFE = /^[\p{L}\p{M}\p{N}!_.'()-]+$/u
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}/
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
    ['résumé.pdf', 'résumé.pdf'],
    ['résumé 📄 final.pdf', 'résumé-final.pdf'],
    ['re\u0301sume\u0301.pdf', 'résumé.pdf'], // macOS names are NFD: the key is NFC
    ['写真.jpeg', '写真.jpeg'],
    ['Ünïcödé №5 ½.txt', 'Ünïcödé-5-½.txt'],
    ['हिन्दी.txt', 'हिन्दी.txt'], // combining vowel signs stay with their letters
    ['evil\u202Etxt.exe', 'evil-txt.exe'], // right-to-left override: would show the name reversed
    ['zero\u200Bwidth.txt', 'zero-width.txt'],
    ['cost$5{x}.txt', 'cost-5-x-.txt'], // `${…}` is an IAM policy variable
    ['..', 'file'],
    ['.', 'file'],
    ['...', 'file'],
    ['', 'file'],
    ['日本語', '日本語'],
    ['📄', 'file'],
    ['\u0001\u0002', 'file'],
    ["it's (really) fine!_-.txt", "it's-(really)-fine!_-.txt"],
  ])('%j → %j', (input, expected) => {
    expect(sanitizeFilename(input)).toBe(expected)
  })

  it("equals next-s3-upload's sanitizeKey for ASCII names wherever that one leaves no path or wildcard", () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme-ascii', maxLength: 60 }), (name) => {
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
        expect(safe.normalize('NFC')).toBe(safe)
        expect(bytes(safe)).toBeLessThanOrEqual(255)
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
    expect(key).toMatch(
      /^next-s3-uploads\/[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\/a+\.jpeg$/,
    )
    expect(key.split('/').pop()).toHaveLength(255)
  })

  it('cuts a long Unicode name at 255 bytes of UTF-8, between whole characters, keeping the extension', () => {
    const name = sanitizeFilename(`${'写'.repeat(200)}.jpeg`)
    expect(name).toBe(`${'写'.repeat(83)}.jpeg`) // 83 × 3 bytes + 5
    const emojiLetters = sanitizeFilename('𝒜'.repeat(100)) // 4-byte letters (surrogate pairs)
    expect(emojiLetters).toBe('𝒜'.repeat(63))
    expect(new TextDecoder('utf-8', { fatal: true }).decode(new TextEncoder().encode(emojiLetters))).toBe(emojiLetters)
  })

  it('fits a long key prefix within 1024 bytes', () => {
    const prefix = `${'p'.repeat(500)}/`
    const key = defaultKey('x'.repeat(3000), prefix)
    expect(key.startsWith(prefix)).toBe(true)
    expect(bytes(key)).toBeLessThanOrEqual(1024)
  })

  it('is the same for any Unicode normalisation form of a name (NFC, NFD, NFKC-stable)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 40 }), (name) => {
        expect(sanitizeFilename(name.normalize('NFD'))).toBe(sanitizeFilename(name.normalize('NFC')))
      }),
      { numRuns: 300 },
    )
  })

  it('gives every upload its own key', () => {
    expect(defaultKey('same.txt')).not.toBe(defaultKey('same.txt'))
  })
})

describe('sanitizePath (relative paths from dropped or picked folders)', () => {
  it.each([
    ['holiday/day 1/写真.jpg', 'holiday/day-1/写真.jpg'],
    ['a\\b\\c.txt', 'a/b/c.txt'],
    ['../../etc/passwd', 'etc/passwd'],
    ['./a/./b/../c.txt', 'a/b/c.txt'],
    ['//a///b//', 'a/b'],
    ['a/*/b.txt', 'a/file/b.txt'],
    ['1/2/3/4/5/6/7/8/9/10/x.txt', '3/4/5/6/7/8/9/10/x.txt'],
    ['', 'file'],
  ])('%j → %j', (input, expected) => {
    expect(sanitizePath(input)).toBe(expected)
  })

  it('keeps the file name whole and drops outer folders when the path is too long', () => {
    const path = `${'outer'.repeat(30)}/${'inner'.repeat(10)}/${'n'.repeat(100)}.txt`
    expect(sanitizePath(path)).toBe(`${'inner'.repeat(10)}/${'n'.repeat(100)}.txt`)
  })

  it('never makes an empty, `.` or `..` segment, a backslash, or more than 255 bytes; stable when applied twice', () => {
    const pathLike = fc.array(
      fc.oneof(fc.constantFrom('/', '\\', '.', '..', '', 'a'), fc.string({ unit: 'binary', maxLength: 40 })),
      { maxLength: 30 },
    )
    fc.assert(
      fc.property(pathLike, (parts) => {
        const path = parts.join('/')
        const safe = sanitizePath(path)
        expect(bytes(safe)).toBeLessThanOrEqual(255)
        expect(safe).not.toContain('\\')
        for (const segment of safe.split('/')) expect(segment).toMatch(SAFE)
        expect(safe.split('/').length).toBeLessThanOrEqual(9)
        expect(sanitizePath(safe)).toBe(safe)
        const key = defaultKey(path)
        expect(key).toMatch(new RegExp(`^next-s3-uploads/${UUID.source}/`))
        expect(bytes(key)).toBeLessThanOrEqual(1024)
        expect(checkKey(key)).toBe(key)
        expect(() => objectUrl({ bucket: 'b', key, region: 'us-east-1' })).not.toThrow()
      }),
      { numRuns: 300 },
    )
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
    const deny = (condition: object) => ({
      Effect: 'Deny',
      Action: 's3:PutObject',
      Resource: '*',
      Condition: condition,
    })
    expect(JSON.parse(uploadPolicy('uploads', 'next-s3-uploads/u/a.png'))).toEqual({
      Version: '2012-10-17',
      Statement: [
        {
          Effect: 'Allow',
          Action: ['s3:PutObject', 's3:AbortMultipartUpload'],
          Resource: ['arn:aws:s3:::uploads/next-s3-uploads/u/a.png'],
        },
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

  it('names a default key of any script exactly: no wildcard, no policy variable', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (name) => {
        const key = defaultKey(name)
        const { Statement } = JSON.parse(uploadPolicy('b', key)) as {
          Statement: Array<{ Resource: string[] | string }>
        }
        expect(Statement[0]!.Resource).toEqual([`arn:aws:s3:::b/${key}`])
        expect(key).not.toMatch(/[*?$]/)
      }),
      { numRuns: 200 },
    )
  })

  it('escapes IAM wildcards in custom keys, so they name one object', () => {
    const { Statement } = JSON.parse(uploadPolicy('b', 'a*b?c$d')) as { Statement: Array<{ Resource: string[] }> }
    // biome-ignore lint/suspicious/noTemplateCurlyInString: an IAM policy variable, written literally
    expect(Statement[0]!.Resource).toEqual(['arn:aws:s3:::b/a${*}b${?}c${$}d'])
  })

  it('on a store without policy variables, refuses such a key (400) rather than write an escape it reads literally', () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: an IAM policy variable, written literally
    for (const key of ['custom/a*b.png', 'a?b', 'cost$5', 'a${*}b']) {
      expect(() => uploadPolicy('b', key, false, false)).toThrow(
        expect.objectContaining({ status: 400, message: expect.stringContaining("Upload with strategy 'presigned'") }),
      )
    }
    expect(JSON.parse(uploadPolicy('b', "plain/a b+c!'().png", false, false)).Statement[0].Resource).toEqual([
      "arn:aws:s3:::b/plain/a b+c!'().png",
    ])
  })

  it('sts.policyVariables: true on AWS, false on any other store, unless configured; checked', () => {
    const base = { accessKeyId: 'AK', secretAccessKey: 'SK', bucket: 'b', region: 'us-east-1' }
    expect(resolveConfig(base, {}).sts.policyVariables).toBe(true)
    expect(resolveConfig({ ...base, endpoint: 'https://s3.eu-west-1.amazonaws.com' }, {}).sts.policyVariables).toBe(
      true,
    )
    expect(resolveConfig({ ...base, endpoint: 'http://127.0.0.1:7480' }, {}).sts.policyVariables).toBe(false)
    expect(
      resolveConfig({ ...base, endpoint: 'http://127.0.0.1:7480', sts: { policyVariables: true } }, {}).sts
        .policyVariables,
    ).toBe(true)
    expect(() => resolveConfig({ ...base, sts: { policyVariables: 'no' as never } }, {})).toThrow(
      new TypeError('updraft: sts.policyVariables must be true or false, got "no"'),
    )
  })
})
