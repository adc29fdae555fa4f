/**
 * What the upload API allows in a file — its size and type — as one rule both sides run: the
 * upload API refuses with 413/415 (server/request-limits.ts), and a page checks the same rule before any
 * request leaves it (src/file-checks.ts), with the limits `GET {api}/info` reports. Pure.
 */
import { isActiveContent, matchesAllowedType } from './content-type.ts'

/** The upload API's `maxFileSize` and `allowedTypes`, as configured and as `/info` reports them. */
export interface UploadLimits {
  /** Bytes. */
  maxFileSize?: number
  /** Exact types (`application/pdf`) or patterns (`image/*`). */
  allowedTypes?: readonly string[]
}

/** Why the limits refuse a file; the fields say everything a message needs. */
export type LimitRefusal =
  | { reason: 'too-large'; size: number; maxFileSize: number }
  /**
   * `allowedTypes` does not match, or the type is active content (HTML, SVG, XML, JavaScript…) that
   * only an exact entry of `allowedTypes` lets through (none at all when it is unset).
   */
  | { reason: 'type'; essence: string; allowedTypes: readonly string[] | undefined; activeContent: boolean }

/** What an upload without a type is stored as: browsers download it rather than render it. */
export const DEFAULT_CONTENT_TYPE = 'application/octet-stream'

/**
 * The first limit `essence` (a lower-cased `type/subtype`) and `size` break, or undefined. Size
 * first: it is the one a person can see without knowing what a media type is.
 */
export function limitRefusal(
  { maxFileSize, allowedTypes }: UploadLimits,
  essence: string,
  size: number,
): LimitRefusal | undefined {
  if (maxFileSize !== undefined && size > maxFileSize) return { reason: 'too-large', size, maxFileSize }
  const activeContent = isActiveContent(essence)
  const allowed = allowedTypes ? matchesAllowedType(essence, allowedTypes) : !activeContent
  return allowed ? undefined : { reason: 'type', essence, allowedTypes, activeContent }
}

/**
 * A browser File's type as the upload API reads it: empty means `application/octet-stream`. The File
 * API already gives a lower-cased ASCII type (or none), so the page only drops parameters; a type
 * the upload API cannot parse as one media type gives undefined (the upload API then says why), without
 * shipping the upload API's whole RFC 9110 parser to the page.
 */
export function essenceOf(filetype: string): string | undefined {
  if (filetype === '') return DEFAULT_CONTENT_TYPE
  const essence = filetype.split(';')[0]!.trim().toLowerCase()
  return /^[!#$%&'+\-.^_`|~0-9a-z]+\/[!#$%&'+\-.^_`|~0-9a-z]+$/.test(essence) && !filetype.includes(',')
    ? essence
    : undefined
}
