// protocol/content-type.ts: one RFC 9110 media type or a refusal, and which types a browser would
// run. Regression for issue 10, finding 2: `image/png, text/html` passed `allowedTypes: ['image/*']`,
// was signed as the object's Content-Type, and Chromium rendered the object as HTML.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { isActiveContent, MediaTypeError, matchesAllowedType, parseMediaType } from '../../protocol/content-type.ts'
import { parseUploadRequest } from '../../server/parse-requests.ts'
import { RequestError } from '../../server/request-error.ts'
import { checkLimits, isAllowedType } from '../../server/request-limits.ts'

describe('parseMediaType', () => {
  it.each([
    ['image/png', 'image/png', 'image/png'],
    ['IMAGE/PNG', 'image/png', 'image/png'],
    ['  text/plain ; Charset=UTF-8 ', 'text/plain', 'text/plain; charset=UTF-8'],
    ['text/plain;charset="utf-8"', 'text/plain', 'text/plain; charset=utf-8'],
    ['text/plain; x="a b"', 'text/plain', 'text/plain; x="a b"'],
    ['text/plain; x="a\\"b"', 'text/plain', 'text/plain; x="a\\"b"'],
    ['text/plain; x=""', 'text/plain', 'text/plain; x=""'],
    ['image/png;', 'image/png', 'image/png'],
    ['image/png;;q=1', 'image/png', 'image/png; q=1'],
    ['application/vnd.api+json', 'application/vnd.api+json', 'application/vnd.api+json'],
  ])('%j → %s, signed as %j', (input, essence, value) => {
    expect(parseMediaType(input)).toMatchObject({ essence, value })
  })

  it.each([
    ['image/png, text/html', /not a list/],
    ['image/png; x=1, text/html', /not a list/],
    ['image/png;, text/html', /not a list/],
    ['image/png; x="a,b"', /not a list/],
    ['', /type\/subtype/],
    ['image', /type\/subtype/],
    ['image/', /type\/subtype/],
    ['/png', /type\/subtype/],
    ['image/png text/html', /unexpected text/],
    ['image/*', /range/],
    ['*/*', /range/],
    ['image/png; x', /name=value/],
    ['image/png; x=', /empty value/],
    ['image/png; x="open', /unterminated/],
    ['image/png; x=1; X=2', /twice/],
    ['image/pngé', /printable ASCII/],
    ['text/html\u2028', /printable ASCII/],
    ['image/png\u0000', /printable ASCII/],
    ['image/p(n)g', /unexpected text/],
  ])('refuses %j', (input, message) => {
    expect(() => parseMediaType(input)).toThrow(MediaTypeError)
    expect(() => parseMediaType(input)).toThrow(message)
  })
})

describe('active content', () => {
  it.each([
    'text/html',
    'application/xhtml+xml',
    'image/svg+xml',
    'text/xml',
    'application/xml',
    'application/rss+xml',
    'text/xsl',
    'text/javascript',
    'application/javascript',
    'application/x-javascript',
    'application/ecmascript',
    'multipart/x-mixed-replace',
    'unknown/unknown',
    'application/unknown',
  ])('%s is active', (essence) => {
    expect(isActiveContent(essence)).toBe(true)
  })

  it.each([
    'image/png',
    'image/jpeg',
    'text/plain',
    'application/pdf',
    'application/json',
    'video/mp4',
    'application/octet-stream',
  ])('%s is not', (essence) => {
    expect(isActiveContent(essence)).toBe(false)
  })

  it('passes a wildcard only when not active; an exact listing lets it through', () => {
    expect(matchesAllowedType('image/png', ['image/*'])).toBe(true)
    expect(matchesAllowedType('image/svg+xml', ['image/*'])).toBe(false)
    expect(matchesAllowedType('image/svg+xml', ['image/*', 'image/svg+xml'])).toBe(true)
    expect(matchesAllowedType('text/html', ['*/*'])).toBe(false)
    expect(matchesAllowedType('text/html', ['TEXT/HTML'])).toBe(true)
  })

  it('checkLimits refuses active content (415) unless allowedTypes names it exactly', () => {
    const request = (filetype: string) => parseUploadRequest({ filename: 'a', filetype })
    const refusal = (limits: Parameters<typeof checkLimits>[0], filetype: string) => {
      try {
        checkLimits(limits, request(filetype))
        return undefined
      } catch (error) {
        return error as RequestError
      }
    }
    expect(refusal({}, 'text/html')).toMatchObject({
      status: 415,
      message: expect.stringMatching(/active content.*list 'text\/html' in allowedTypes/),
    })
    expect(refusal({ allowedTypes: ['image/*'] }, 'image/svg+xml')).toMatchObject({
      status: 415,
      message: expect.stringMatching(/exact type/),
    })
    expect(refusal({ allowedTypes: ['text/html'] }, 'Text/HTML; charset=utf-8')).toBeUndefined()
    expect(refusal({}, 'image/png')).toBeUndefined()
  })

  it('a non-ASCII filetype is a 400 naming the problem (it was a 500)', () => {
    expect(() => parseUploadRequest({ filename: 'a', filetype: 'image/pngé' })).toThrow(
      expect.objectContaining({
        status: 400,
        message: expect.stringMatching(/^filetype "image\/pngé" must be printable ASCII/),
      }),
    )
  })
})

/** Pieces a hostile page would splice together to smuggle a second type past `image/*`. */
const hostilePiece = fc.constantFrom(
  'image/png',
  'IMAGE/PNG',
  'text/html',
  'image/svg+xml',
  ',',
  ', ',
  ';',
  '; ',
  '=',
  '"',
  '\\',
  ' ',
  '\t',
  'x=1',
  'charset=utf-8',
  '*/*',
  '*',
  '/',
  '\u00e9',
  '\u2028',
  '\r\n',
  '\u0000',
  'image/png;,text/html',
)
const hostileFiletype = fc.oneof(
  fc.array(hostilePiece, { minLength: 1, maxLength: 8 }).map((pieces) => pieces.join('')),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
)

describe('hostile filetype strings (fast-check)', () => {
  it('either refused, or one canonical, printable, comma-free type that parses to itself', () => {
    fc.assert(
      fc.property(hostileFiletype, (filetype) => {
        let parsed: ReturnType<typeof parseMediaType>
        try {
          parsed = parseMediaType(filetype)
        } catch (error) {
          expect(error).toBeInstanceOf(MediaTypeError)
          return
        }
        expect(parsed.value).toMatch(/^[\x20-\x7e]+$/)
        expect(parsed.value).not.toContain(',')
        expect(parsed.essence).toMatch(/^[^/\s;]+\/[^/\s;]+$/)
        expect(parsed.value.startsWith(parsed.essence)).toBe(true)
        // Canonical: what is signed parses back to exactly itself.
        expect(parseMediaType(parsed.value)).toEqual(parsed)
      }),
      { numRuns: 2000 },
    )
  })

  it('nothing active ever passes image/*, and what passes is signed as an image type', () => {
    fc.assert(
      fc.property(hostileFiletype, (filetype) => {
        let request: ReturnType<typeof parseUploadRequest>
        try {
          request = parseUploadRequest({ filename: 'a.png', filetype })
        } catch (error) {
          expect(error).toBeInstanceOf(RequestError)
          expect((error as RequestError).status).toBe(400)
          return
        }
        const allowed = isAllowedType(filetype, ['image/*'])
        let accepted = true
        try {
          checkLimits({ allowedTypes: ['image/*'] }, request)
        } catch {
          accepted = false
        }
        expect(accepted).toBe(allowed)
        if (accepted) {
          expect(request.contentType).toMatch(/^image\//)
          expect(isActiveContent(request.essence)).toBe(false)
          expect(request.essence).not.toMatch(/html|svg|xml|script/i)
        }
      }),
      { numRuns: 2000 },
    )
  })
})
