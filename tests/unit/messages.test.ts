// Words for people (src/messages.ts), built from the typed errors' fields; and the page's own
// check of the upload API's limits (src/file-checks.ts, protocol/file-limits.ts).
import fc from 'fast-check'
import { describe, expect, it, vi } from 'vitest'
import { ApiError, NetworkError, S3Error, UploadAbortedError, UploadError } from '../../engine/core/errors.ts'
import { limitRefusal } from '../../protocol/file-limits.ts'
import { parseUploadRequest } from '../../server/parse-requests.ts'
import type { RequestError } from '../../server/request-error.ts'
import { checkLimits } from '../../server/request-limits.ts'
import { acceptOf, checkFile, FileRefusedError } from '../../src/file-checks.ts'
import { formatBytes, formatTimeLeft, overLimit } from '../../src/format.ts'
import { describeLimits, errorMessage, isFinal, typeName } from '../../src/messages.ts'

const MiB = 1024 * 1024
/** A File that claims `size` bytes without allocating them. */
function sized(name: string, type: string, size: number) {
  const file = new File([], name, { type })
  Object.defineProperty(file, 'size', { value: size })
  return file
}

describe('checkFile: the upload API limits, applied in the page', () => {
  const limits = { maxFileSize: 30 * MiB, allowedTypes: ['image/*', 'application/pdf'] }

  it('refuses a file over maxFileSize with the figures, and a type not allowed with the type', () => {
    const big = checkFile(sized('talk.mp4', 'image/png', 60 * MiB), limits)
    expect(big).toBeInstanceOf(FileRefusedError)
    expect(big!.refusal).toEqual({ reason: 'too-large', size: 60 * MiB, maxFileSize: 30 * MiB })
    expect(checkFile(sized('notes.txt', 'text/plain', 10), limits)!.refusal).toMatchObject({
      reason: 'type',
      essence: 'text/plain',
    })
    expect(checkFile(sized('a.png', 'image/png', 30 * MiB), limits)).toBeUndefined()
    expect(checkFile(sized('a.pdf', 'application/pdf', 1), limits)).toBeUndefined()
  })

  it('refuses active content as the upload API does: SVG is not an image/* match, HTML needs naming even without allowedTypes', () => {
    expect(checkFile(sized('logo.svg', 'image/svg+xml', 10), limits)!.refusal).toMatchObject({ activeContent: true })
    expect(checkFile(sized('page.html', 'text/html', 10), {})!.refusal).toMatchObject({
      reason: 'type',
      allowedTypes: undefined,
    })
    expect(checkFile(sized('page.html', 'text/html', 10), { allowedTypes: ['text/html'] })).toBeUndefined()
    expect(checkFile(sized('x', '', 10), { allowedTypes: ['image/*'] })!.refusal).toMatchObject({
      essence: 'application/octet-stream',
    })
  })

  it('agrees with the upload API: the page refuses exactly what checkLimits answers 413 or 415 to', () => {
    const types = fc.constantFrom(
      'image/png',
      'image/svg+xml',
      'text/plain',
      'text/html',
      'application/pdf',
      'video/mp4',
      '',
      'application/xml',
    )
    const allowed = fc.option(fc.subarray(['image/*', 'application/pdf', 'text/html', 'video/*']), { nil: undefined })
    fc.assert(
      fc.property(
        types,
        fc.nat(100),
        fc.option(fc.nat(100), { nil: undefined }),
        allowed,
        (type, size, maxFileSize, allowedTypes) => {
          const page = checkFile(sized('f', type, size), { maxFileSize, allowedTypes })
          let serverRefusal: RequestError | undefined
          try {
            checkLimits(
              { maxFileSize, allowedTypes },
              parseUploadRequest({ filename: 'f', filetype: type, filesize: size }),
            )
          } catch (error) {
            serverRefusal = error as RequestError
          }
          expect(page?.refusal.reason).toBe(
            serverRefusal === undefined ? undefined : serverRefusal.status === 413 ? 'too-large' : 'type',
          )
        },
      ),
      { numRuns: 300 },
    )
  })

  it("the picker's accept lists allowedTypes; no limits, no accept", () => {
    expect(acceptOf(['image/*', 'application/pdf'])).toBe('image/*,application/pdf')
    expect(acceptOf(undefined)).toBeUndefined()
    expect(limitRefusal({}, 'image/png', 10)).toBeUndefined()
  })
})

describe('errorMessage', () => {
  const refused = (file: File, limits: Parameters<typeof checkFile>[1]) => checkFile(file, limits)!

  it('says a refused size in binary units, as the issue asked: "60 MiB is over the 30 MiB limit"', () => {
    expect(errorMessage(refused(sized('a.pdf', 'application/pdf', 60 * MiB), { maxFileSize: 30 * MiB }))).toBe(
      '60 MiB is over the 30 MiB limit',
    )
  })

  it('names a refused type the way people do: "PDFs aren\'t accepted here — only images and videos"', () => {
    const limits = { allowedTypes: ['image/*', 'video/*'] }
    expect(errorMessage(refused(sized('cv.pdf', 'application/pdf', 1), limits))).toBe(
      "PDFs aren't accepted here — only images and videos",
    )
    expect(
      errorMessage(
        refused(sized('cv.docx', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', 1), limits),
      ),
    ).toBe("DOCX files aren't accepted here — only images and videos")
    expect(errorMessage(refused(sized('page.html', 'text/html', 1), {}))).toBe("Web pages (HTML) aren't accepted here")
  })

  it("turns the upload API's 413 and 415 into the same words, with the limits from /info", () => {
    const file = sized('talk.mp4', 'video/mp4', 62914560)
    const limits = { maxFileSize: 31457280, allowedTypes: ['image/*', 'application/pdf'] }
    // The upload API's own words stay in error.message for developers; people get these.
    const tooBig = new ApiError('60 MiB is over the 30 MiB limit (filesize 62914560, maxFileSize 31457280 bytes)', 413)
    expect(errorMessage(tooBig, { file, limits })).toBe('60 MiB is over the 30 MiB limit')
    expect(errorMessage(tooBig, { file })).toBe("60 MiB is over this site's size limit")
    const pdf = sized('cv.pdf', 'application/pdf', 1)
    expect(
      errorMessage(new ApiError("filetype 'application/pdf' is not allowed; allowed: image/*", 415), {
        file: pdf,
        limits: { allowedTypes: ['image/*'] },
      }),
    ).toBe("PDFs aren't accepted here — only images")
  })

  it.each([
    // Past the retries, online: a refusal whose reply CORS hid (Swift's error replies carry no CORS headers) is likelier than the link.
    [
      new NetworkError('Failed to fetch'),
      {},
      expect.stringMatching(
        /^Storage sent no reply this page can read — it is out of reach, or refused \(an expired link, a refused signature\) with a reply its CORS rules hide\. Retry; .*storage's CORS rules, clock and keys$/,
      ),
    ],
    [new NetworkError('Failed to fetch'), { retrying: true }, 'Connection lost — retrying'],
    // Online, what the page could not reach is named: a refused host is not the browser being offline.
    [
      Object.assign(new NetworkError('x'), { to: 'api', origin: 'http://127.0.0.1:9' }),
      { retrying: true },
      "Can't reach the upload API at http://127.0.0.1:9 — retrying",
    ],
    [
      Object.assign(new NetworkError('x'), { to: 'api', origin: 'http://127.0.0.1:9' }),
      {},
      "Can't reach the upload API at http://127.0.0.1:9 — it may be down; retry later",
    ],
    [
      Object.assign(new NetworkError('x'), { to: 'storage', origin: 'https://s3.test' }),
      { retrying: true },
      "Can't reach storage at https://s3.test — retrying",
    ],
    [
      Object.assign(new NetworkError('x'), { to: 'storage', origin: 'https://s3.test' }),
      {},
      expect.stringMatching(
        /^Storage at https:\/\/s3\.test sent no reply this page can read — it is out of reach, or refused/,
      ),
    ],
    // A misconfigured server: one sentence whatever the file's size, and nothing of the settings.
    [
      new ApiError(
        'The upload API is misconfigured: storage refused its credentials. …',
        500,
        null,
        'ServerMisconfigured',
      ),
      {},
      "This site's upload service is misconfigured — its owner has to fix it; retrying won't help",
    ],
    [
      new S3Error('SignatureDoesNotMatch', 'no', 403),
      {},
      "Storage refused this site's upload signature — its owner has to fix its storage key; retrying won't help",
    ],
    [new UploadAbortedError(), {}, 'Cancelled'],
    [new ApiError('Forbidden', 403), {}, "The server didn't allow this upload — sign in again, or reload the page"],
    [new ApiError('Too Many Requests', 429), {}, 'Too many uploads at once — wait a minute, then retry'],
    [new ApiError('Internal Server Error', 500), {}, 'The server had a problem — try again'],
    [
      new ApiError('filename must be a non-empty string', 400),
      {},
      "The server refused this upload — it may be a fault in this site; retrying won't help",
    ],
    // The server's verdict on the stored bytes (/complete) is specific and written for people: shown as is.
    [
      new ApiError(
        'The uploaded object was refused and deleted: its first bytes do not match its declared type, image/png',
        422,
      ),
      {},
      'The uploaded object was refused and deleted: its first bytes do not match its declared type, image/png',
    ],
    [new S3Error('RequestTimeTooSkewed', 'skewed', 403), {}, "Your device's clock is wrong — set it right, then retry"],
    [new S3Error('AccessDenied', 'no', 403), {}, 'Storage refused the upload (access denied)'],
    [new S3Error('SlowDown', 'slow', 503), { retrying: true }, 'Storage is busy — retrying'],
    [new S3Error('InternalError', 'oops', 500), {}, 'Storage had a problem — try again'],
    [new S3Error('InvalidPart', 'bad part', 400), {}, 'Storage refused the upload (InvalidPart)'],
    [
      new UploadError(
        'Part 2 was uploaded but its ETag is not readable: add "ETag" to the bucket\'s CORS ExposeHeaders',
      ),
      {},
      expect.stringContaining('ExposeHeaders'),
    ],
    [new TypeError('x is not a function'), {}, 'Something went wrong: x is not a function'],
  ])('%s → %j', (error, context, expected) => {
    expect(errorMessage(error, context)).toEqual(expected)
  })

  it('past the retries with the browser offline, a network error is the connection, not storage', () => {
    vi.stubGlobal('navigator', { onLine: false })
    try {
      expect(errorMessage(new NetworkError('Network error on PUT http://127.0.0.1:9'))).toBe(
        "You're offline — reconnect, then retry",
      )
      expect(errorMessage(new NetworkError('x'), { retrying: true })).toBe('Connection lost — retrying')
    } finally {
      vi.unstubAllGlobals()
    }
  })
})

describe('words for limits, sizes and times', () => {
  it('describeLimits says what a dropzone accepts', () => {
    expect(describeLimits({ maxFileSize: 30 * MiB, allowedTypes: ['image/*', 'application/pdf'] })).toBe(
      'Images and PDFs, up to 30 MiB each',
    )
    expect(describeLimits({ maxFileSize: 5 * MiB })).toBe('Up to 5 MiB per file')
    expect(describeLimits({ allowedTypes: ['video/*'] })).toBe('Videos')
    expect(describeLimits({})).toBeUndefined()
  })

  it('typeName falls back to the extension, then to the type', () => {
    expect(typeName('application/x-foo', 'a.foo')).toBe('FOO files')
    expect(typeName('application/x-foo')).toBe('application/x-foo files')
    expect(typeName('font/*')).toBe('font files')
  })

  it('overLimit: the size and the limit in units, with as many decimals as it takes to tell them apart', () => {
    expect(overLimit(105906176, 104857600)).toBe('101 MiB is over the 100 MiB limit')
    expect(overLimit(40 * MiB, 30 * MiB)).toBe('40 MiB is over the 30 MiB limit')
    expect(overLimit(100.4 * MiB, 100 * MiB)).toBe('100.4 MiB is over the 100 MiB limit')
    expect(overLimit(100 * MiB + 1, 100 * MiB)).toBe('104857601 bytes is over the limit of 104857600 bytes')
    expect(overLimit(2000, 1000)).toBe('2 KiB is over the 1000 B limit')
    fc.assert(
      fc.property(fc.nat(2 ** 40), fc.nat(2 ** 40), (a, b) => {
        const [limit, size] = a < b ? [a, b] : [b, a + 1]
        const [, said, allowed] = /^(.+?) is over the (?:limit of )?(.+?)(?: limit| bytes)?$/.exec(
          overLimit(size, limit),
        )!
        return said !== allowed
      }),
    )
  })

  it('isFinal: no Retry for what no retry changes', () => {
    expect(isFinal(new ApiError('x', 500, null, 'ServerMisconfigured'))).toBe(true)
    expect(isFinal(new ApiError('x', 415))).toBe(true)
    expect(isFinal(new ApiError('x', 422))).toBe(true)
    expect(isFinal(new S3Error('SignatureDoesNotMatch', 'x', 403))).toBe(true)
    expect(isFinal(checkFile(sized('a.txt', 'text/plain', 1), { allowedTypes: ['image/*'] }))).toBe(true)
    expect(isFinal(new ApiError('Internal Server Error', 500))).toBe(false)
    expect(isFinal(new S3Error('ExpiredToken', 'x', 400))).toBe(false)
    expect(isFinal(new NetworkError('x'))).toBe(false)
    expect(isFinal(new UploadAbortedError())).toBe(false)
  })

  it('formatBytes and formatTimeLeft', () => {
    expect([0, 1023, 1024, 1536, 5 * MiB, 62914560, 12.5 * MiB].map(formatBytes)).toEqual([
      '0 B',
      '1023 B',
      '1 KiB',
      '1.5 KiB',
      '5 MiB',
      '60 MiB',
      '13 MiB',
    ])
    // Rounded as shown: just short of 1 MiB (a speed of 1023.7 KiB/s, Firefox's "1024 KiB/s") is 1 MiB.
    expect([MiB - 300, MiB - 1, 1023.4 * 1024, 1024 * MiB - 1024].map(formatBytes)).toEqual([
      '1 MiB',
      '1 MiB',
      '1023 KiB',
      '1 GiB',
    ])
    expect([0.2, 8.1, 59, 61, 3599, 3900].map(formatTimeLeft)).toEqual([
      '1 s left',
      '9 s left',
      '59 s left',
      '1 min left',
      '1 h left',
      '1 h 5 min left',
    ])
  })
})
