/**
 * A request against what the upload API allows (`maxFileSize`, `allowedTypes`, active content) and
 * against the part plan its ticket binds: checked before any key, credential or URL exists.
 */

import { overLimit } from '../protocol/bytes.ts'
import { matchesAllowedType, parseMediaType } from '../protocol/content-type.ts'
import { limitRefusal, type UploadLimits } from '../protocol/file-limits.ts'
import { MAX_PARTS } from '../protocol/limits.ts'
import { maxPartNumber } from '../protocol/parts.ts'
import type { CompleteRequest, PartsRequest } from '../protocol/wire.ts'
import type { ValidUploadRequest } from './parse-requests.ts'
import { badRequest, RequestError } from './request-error.ts'

/**
 * maxFileSize (413, and `filesize` or `sizeUnknown` becomes required: an upload of unknown length
 * is held to the limit by part caps and at `/complete`), allowedTypes (415), and active content
 * (415: HTML, SVG, XML, JavaScript… only when `allowedTypes` names the exact type).
 */
export function checkLimits(
  limits: UploadLimits,
  { filetype, essence, filesize, sizeUnknown }: ValidUploadRequest,
): void {
  const { maxFileSize, allowedTypes } = limits
  if (maxFileSize !== undefined && filesize === undefined && !sizeUnknown) {
    throw badRequest(`filesize is required: this upload API accepts files of at most ${maxFileSize} bytes`)
  }
  const refusal = limitRefusal(limits, essence, filesize ?? 0)
  if (refusal?.reason === 'too-large') {
    throw new RequestError(
      413,
      `${overLimit(filesize!, maxFileSize!)} (filesize ${filesize}, maxFileSize ${maxFileSize} bytes)`,
    )
  }
  if (refusal && allowedTypes) {
    const exactOnly = refusal.activeContent
      ? ` (active content such as ${essence} must be listed by its exact type)`
      : ''
    throw new RequestError(
      415,
      `The type '${filetype}' is not accepted here: allowedTypes is ${allowedTypes.join(', ')}${exactOnly}`,
    )
  }
  if (refusal) {
    throw new RequestError(
      415,
      `filetype '${filetype}' is active content that a browser would run on the storage's origin; ` +
        `to accept it, list '${essence}' in allowedTypes`,
    )
  }
}

/**
 * Whether `filetype` is one media type that `allowedTypes` allows: exact types and `type/*`
 * patterns, case-insensitive, parameters ignored; active content only by its exact type.
 */
export function isAllowedType(filetype: string, allowedTypes: readonly string[]): boolean {
  try {
    return matchesAllowedType(parseMediaType(filetype).essence, allowedTypes)
  } catch {
    return false
  }
}

/**
 * `sizes` against an upload of unknown length: present, and each part 1..partSize bytes (only the
 * last part may be shorter than partSize, which storage enforces at Complete: EntityTooSmall).
 */
export function checkPartSizes(
  sizes: PartsRequest['sizes'],
  partSize: number,
): asserts sizes is NonNullable<PartsRequest['sizes']> {
  if (sizes === undefined) {
    throw badRequest('sizes is required for an upload of unknown length: give each part asked for its length in bytes')
  }
  for (const [partNumber, size] of Object.entries(sizes)) {
    if (size < 1 || size > partSize)
      throw badRequest(`sizes[${partNumber}] must be from 1 to the part size of ${partSize} bytes, got ${size}`)
  }
}

/** What bounds the parts of an upload of unknown length: the ticket's part size and the upload API's limit. */
export interface UnknownSizeLimits {
  partSize: number
  maxFileSize: number | undefined
}

/**
 * Part numbers of an upload of unknown length: 1..`maxPartNumber` (protocol/parts.ts), above it
 * 413: more parts would hold more than the upload API's `maxFileSize`, or than S3's 10 000 parts.
 */
export function checkUnknownSizePartNumbers(
  partNumbers: readonly number[],
  { partSize, maxFileSize }: UnknownSizeLimits,
): void {
  const below = partNumbers.find((n) => n < 1)
  if (below !== undefined) throw badRequest(`part number ${below} is below 1: parts are numbered from 1`)
  const highest = maxPartNumber(partSize, maxFileSize)
  const above = partNumbers.find((n) => n > highest)
  if (above === undefined) return
  const limit =
    maxFileSize === undefined || highest === MAX_PARTS
      ? `S3 allows at most ${MAX_PARTS} parts per upload`
      : `this upload API accepts files of at most ${maxFileSize} bytes, which is ${highest} parts of ${partSize} bytes`
  throw new RequestError(413, `part number ${above} is over the limit: ${limit}`)
}

/** Complete of an upload of unknown length: its parts within the limits, each once (S3 checks the rest: InvalidPart, EntityTooSmall). */
export function checkUnknownSizeCompleteParts(
  parts: NonNullable<CompleteRequest['parts']>,
  limits: UnknownSizeLimits,
): void {
  checkUnknownSizePartNumbers(
    parts.map((part) => part.partNumber),
    limits,
  )
  const seen = new Set(parts.map((part) => part.partNumber))
  if (seen.size !== parts.length)
    throw badRequest(`parts must list each part once, got ${parts.length} entries for ${seen.size} distinct parts`)
}

/** Part numbers against the ticket's plan: 1..partCount, each once. */
export function checkPartNumbers(partNumbers: readonly number[], partCount: number): void {
  const outside = partNumbers.find((n) => n < 1 || n > partCount)
  if (outside !== undefined) throw badRequest(`part number ${outside} is outside 1..${partCount}`)
}

/** Complete must list every planned part exactly once: 1..partCount. */
export function checkCompleteParts(parts: NonNullable<CompleteRequest['parts']>, partCount: number): void {
  checkPartNumbers(
    parts.map((part) => part.partNumber),
    partCount,
  )
  const seen = new Set(parts.map((part) => part.partNumber))
  if (seen.size !== parts.length || parts.length !== partCount) {
    throw badRequest(
      `parts must list each of the ${partCount} planned parts exactly once, got ${parts.length} entries for ${seen.size} distinct parts`,
    )
  }
}
