// Issue 14, uploads of unknown length (notes: the wire contract): what the upload API accepts from a
// page that streams a body whose length it learns only at its end: `sizeUnknown` on the upload
// request, `sizes` on /parts, and the part cap that holds such an upload to `maxFileSize`.
import { describe, expect, it } from 'vitest'
import { MAX_PARTS, MiB } from '../../protocol/limits.ts'
import { maxPartNumber } from '../../protocol/parts.ts'
import { parsePartsRequest, parseUploadRequest } from '../../server/parse-requests.ts'
import {
  checkLimits,
  checkPartSizes,
  checkUnknownSizeCompleteParts,
  checkUnknownSizePartNumbers,
} from '../../server/request-limits.ts'
import { refusal } from '../helpers/refusal.ts'

const request = { filename: 'clip.webm', filetype: 'video/webm' }
const PART = 5 * MiB

describe('the upload request', () => {
  it('takes sizeUnknown: true without filesize, and false or absent as before', () => {
    expect(parseUploadRequest({ ...request, sizeUnknown: true })).toMatchObject({
      filesize: undefined,
      sizeUnknown: true,
    })
    expect(parseUploadRequest({ ...request, sizeUnknown: false, filesize: 3 })).toMatchObject({
      filesize: 3,
      sizeUnknown: false,
    })
    expect(parseUploadRequest(request)).toMatchObject({ filesize: undefined, sizeUnknown: false })
  })

  it('refuses sizeUnknown with filesize, and a sizeUnknown that is not a boolean (400)', () => {
    expect(refusal(() => parseUploadRequest({ ...request, sizeUnknown: true, filesize: 10 }))).toEqual({
      status: 400,
      message: 'Send either filesize (the length is known) or sizeUnknown: true (it is not), not both',
    })
    // Zero is a size too.
    expect(refusal(() => parseUploadRequest({ ...request, sizeUnknown: true, filesize: 0 })).status).toBe(400)
    expect(refusal(() => parseUploadRequest({ ...request, sizeUnknown: 'true' }))).toEqual({
      status: 400,
      message: 'sizeUnknown must be true or false, got "true"',
    })
  })

  it('with maxFileSize, sizeUnknown stands in for filesize; neither is still a 400', () => {
    expect(() =>
      checkLimits({ maxFileSize: 10 * MiB }, parseUploadRequest({ ...request, sizeUnknown: true })),
    ).not.toThrow()
    expect(refusal(() => checkLimits({ maxFileSize: 10 * MiB }, parseUploadRequest(request)))).toEqual({
      status: 400,
      message: `filesize is required: this upload API accepts files of at most ${10 * MiB} bytes`,
    })
    // The type is checked as for any upload.
    expect(
      refusal(() => checkLimits({ allowedTypes: ['image/*'] }, parseUploadRequest({ ...request, sizeUnknown: true })))
        .status,
    ).toBe(415)
  })
})

describe('/parts with sizes', () => {
  const ticket = 'v1.x.y'
  it('reads sizes beside contentMd5, naming exactly the parts asked for', () => {
    const md5 = '1B2M2Y8AsgTpgAmY7PhCfg=='
    expect(
      parsePartsRequest({ ticket, partNumbers: [3, 4], sizes: { 3: PART, 4: 17 }, contentMd5: { 3: md5, 4: md5 } }),
    ).toEqual({
      ticket,
      partNumbers: [3, 4],
      sizes: { 3: PART, 4: 17 },
      contentMd5: { 3: md5, 4: md5 },
    })
    expect(parsePartsRequest({ ticket, partNumbers: [1] })).not.toHaveProperty('sizes')
  })

  it.each<[string, unknown, string]>([
    ['a part missing', { 3: PART }, 'sizes must give the length of every part asked for: part 4 has none'],
    ['an extra part', { 3: PART, 4: PART, 5: PART }, 'sizes names part "5", which is not among partNumbers'],
    ['a fraction', { 3: PART, 4: 1.5 }, "sizes[4] must be the part's length in bytes, got number 1.5"],
    ['a string', { 3: PART, 4: '10' }, 'sizes[4] must be the part\'s length in bytes, got "10"'],
    ['an array', [PART, PART], "sizes must be an object of part number → the part's length in bytes, got an array"],
  ])('refuses sizes with %s (400)', (_case, sizes, message) => {
    expect(refusal(() => parsePartsRequest({ ticket, partNumbers: [3, 4], sizes }))).toEqual({ status: 400, message })
  })

  it('checkPartSizes: required, and each from 1 to partSize bytes (400)', () => {
    expect(() => checkPartSizes({ 1: PART, 2: 1 }, PART)).not.toThrow()
    expect(refusal(() => checkPartSizes(undefined, PART))).toEqual({
      status: 400,
      message: 'sizes is required for an upload of unknown length: give each part asked for its length in bytes',
    })
    expect(refusal(() => checkPartSizes({ 1: PART + 1 }, PART))).toEqual({
      status: 400,
      message: `sizes[1] must be from 1 to the part size of ${PART} bytes, got ${PART + 1}`,
    })
    expect(refusal(() => checkPartSizes({ 2: 0 }, PART)).status).toBe(400)
    expect(refusal(() => checkPartSizes({ 2: -5 }, PART)).status).toBe(400)
  })
})

describe('the part cap: min(10000, ceil(maxFileSize / partSize))', () => {
  it('maxPartNumber', () => {
    expect(maxPartNumber(PART)).toBe(MAX_PARTS)
    expect(maxPartNumber(PART, 12 * MiB)).toBe(3)
    expect(maxPartNumber(PART, 10 * MiB)).toBe(2)
    expect(maxPartNumber(PART, 1)).toBe(1)
    expect(maxPartNumber(PART, 0)).toBe(0)
    expect(maxPartNumber(PART, 1024 * 1024 * MiB)).toBe(MAX_PARTS)
  })

  it('refuses part numbers above it with 413 naming the limit, and below 1 with 400', () => {
    const limits = { partSize: PART, maxFileSize: 12 * MiB }
    expect(() => checkUnknownSizePartNumbers([1, 2, 3], limits)).not.toThrow()
    expect(refusal(() => checkUnknownSizePartNumbers([3, 4], limits))).toEqual({
      status: 413,
      message: `part number 4 is over the limit: this upload API accepts files of at most ${12 * MiB} bytes, which is 3 parts of ${PART} bytes`,
    })
    expect(refusal(() => checkUnknownSizePartNumbers([10_001], { partSize: PART, maxFileSize: undefined }))).toEqual({
      status: 413,
      message: 'part number 10001 is over the limit: S3 allows at most 10000 parts per upload',
    })
    expect(refusal(() => checkUnknownSizePartNumbers([0], limits))).toEqual({
      status: 400,
      message: 'part number 0 is below 1: parts are numbered from 1',
    })
  })

  it('a Complete lists parts within the cap, each once; gaps are for storage to judge', () => {
    const limits = { partSize: PART, maxFileSize: 12 * MiB }
    const part = (partNumber: number) => ({ partNumber, etag: '"e"' })
    expect(() => checkUnknownSizeCompleteParts([part(2), part(1)], limits)).not.toThrow()
    expect(refusal(() => checkUnknownSizeCompleteParts([part(1), part(4)], limits)).status).toBe(413)
    expect(refusal(() => checkUnknownSizeCompleteParts([part(1), part(1)], limits))).toEqual({
      status: 400,
      message: 'parts must list each part once, got 2 entries for 1 distinct parts',
    })
  })
})
