/**
 * What the endpoint accepts from a page, checked field by field with messages that say what to
 * change. Pure (no Node, no SDK), so any runtime and either side can run it.
 */
import { matchesAllowedType, MediaTypeError, parseMediaType } from './content-type.ts'
import { DEFAULT_CONTENT_TYPE, limitRefusal, type UploadLimits } from './file-limits.ts'
import { maxPartNumber } from './parts.ts'
import { MAX_BODY_BYTES, MAX_FILENAME_BYTES, MAX_FILETYPE_LENGTH, MAX_OBJECT_SIZE, MAX_PARTS, MAX_PARTS_PER_REQUEST } from './limits.ts'
import type { AbortRequest, CompleteRequest, DuplicatesRequest, PartsRequest, RefreshRequest, Strategy } from './wire.ts'

/**
 * A refusal the client caused: the handler answers it as `{ error: message }` with `status`, and
 * never logs it as a fault. Throw one from your `key` callback to refuse a request with your own
 * status and words (`authorize` refuses by returning false: 403).
 *
 * @example
 * ```ts
 * createUploadHandler({
 *   key: (request, filename, body) => {
 *     if (typeof body.albumId !== 'string') throw new RequestError(400, 'albumId is required: send it in endpointBody')
 *     return `albums/${body.albumId}/${crypto.randomUUID()}/${sanitizeFilename(filename)}`
 *   },
 * })
 * ```
 */
export class RequestError extends Error {
  override name = 'RequestError'
  /** The HTTP status answered: 400, 403, 413, 415, 429, … */
  readonly status: number

  constructor(status: number, message: string) {
    super(message)
    this.status = status
  }
}

/** An upload request after validation; `body` keeps every field, extra ones included, for the key callback. */
export interface ValidUploadRequest {
  filename: string
  /** As the page sent it. */
  filetype: string
  /**
   * `filetype` as one canonical media type (protocol/content-type.ts), or `application/octet-stream`
   * when the page sent none: what presigned uploads sign as the object's Content-Type.
   */
  contentType: string
  /** `type/subtype` of `contentType`, lower-cased: what `allowedTypes` is matched against. */
  essence: string
  filesize: number | undefined
  /** The page sent `sizeUnknown: true`: a stream whose length it learns only at its end (`filesize` is then undefined). */
  sizeUnknown: boolean
  /** Token mode: the page asks the endpoint to create the multipart upload (UploadRequest.createMultipart). */
  createMultipart: boolean
  strategy: Strategy
  body: Record<string, unknown>
}

const CONTROL = /[\u0000-\u001f\u007f]/

export function parseUploadRequest(body: unknown): ValidUploadRequest {
  const fields = asObject(body)
  const { filename, filetype, filesize, sizeUnknown, createMultipart } = fields
  if (typeof filename !== 'string' || filename === '') {
    throw badRequest(`filename must be a non-empty string, got ${describe(filename)}`)
  }
  const filenameBytes = new TextEncoder().encode(filename).length
  if (filenameBytes > MAX_FILENAME_BYTES) {
    throw badRequest(`filename must be at most ${MAX_FILENAME_BYTES} bytes (UTF-8), got ${filenameBytes}`)
  }
  // filetype becomes a signed Content-Type header: a control character would break the request.
  if (typeof filetype !== 'string' || CONTROL.test(filetype) || filetype.length > MAX_FILETYPE_LENGTH) {
    throw badRequest(`filetype must be a string of at most ${MAX_FILETYPE_LENGTH} printable characters, got ${describe(filetype)}`)
  }
  const mediaType = filetype === '' ? undefined : parseFiletype(filetype)
  if (filesize !== undefined && !(Number.isSafeInteger(filesize) && (filesize as number) >= 0)) {
    throw badRequest(`filesize must be a whole number of bytes (0 or more), got ${describe(filesize)}`)
  }
  if (typeof filesize === 'number' && filesize > MAX_OBJECT_SIZE) {
    throw new RequestError(413, `filesize ${filesize} is over S3's limit of ${MAX_OBJECT_SIZE} bytes (5 TiB) per object`)
  }
  if (sizeUnknown !== undefined && typeof sizeUnknown !== 'boolean') {
    throw badRequest(`sizeUnknown must be true or false, got ${describe(sizeUnknown)}`)
  }
  if (sizeUnknown && filesize !== undefined) {
    throw badRequest('Send either filesize (the length is known) or sizeUnknown: true (it is not), not both')
  }
  if (createMultipart !== undefined && typeof createMultipart !== 'boolean') {
    throw badRequest(`createMultipart must be true or false, got ${describe(createMultipart)}`)
  }
  if (createMultipart && filesize === undefined) {
    throw badRequest('createMultipart needs the filesize: only an upload of declared length is created by the endpoint')
  }
  return {
    filename,
    filetype,
    // Never unsigned: a browser sniffs an object without a Content-Type, and may find HTML.
    contentType: mediaType?.value ?? DEFAULT_CONTENT_TYPE,
    essence: mediaType?.essence ?? DEFAULT_CONTENT_TYPE,
    filesize: filesize as number | undefined,
    sizeUnknown: sizeUnknown === true,
    createMultipart: createMultipart === true,
    strategy: strategyOf(fields),
    body: fields,
  }
}

export { DEFAULT_CONTENT_TYPE }

function parseFiletype(filetype: string) {
  try {
    return parseMediaType(filetype)
  } catch (error) {
    if (error instanceof MediaTypeError) throw badRequest(`filetype ${describe(filetype)} ${error.message}`)
    throw error
  }
}

/** What the server allows: checked before any key, credential or URL exists (protocol/file-limits.ts). */
export type { UploadLimits }

/**
 * maxFileSize (413, and `filesize` or `sizeUnknown` becomes required: an upload of unknown length
 * is held to the limit by part caps and at `/complete`), allowedTypes (415), and active content
 * (415: HTML, SVG, XML, JavaScript… only when `allowedTypes` names the exact type).
 */
export function checkLimits(limits: UploadLimits, { filetype, essence, filesize, sizeUnknown }: ValidUploadRequest): void {
  const { maxFileSize, allowedTypes } = limits
  if (maxFileSize !== undefined && filesize === undefined && !sizeUnknown) {
    throw badRequest(`filesize is required: this endpoint accepts files of at most ${maxFileSize} bytes`)
  }
  const refusal = limitRefusal(limits, essence, filesize ?? 0)
  if (refusal?.reason === 'too-large') {
    throw new RequestError(413, `filesize ${filesize} is over the limit of ${maxFileSize} bytes`)
  }
  if (refusal && allowedTypes) {
    const exactOnly = refusal.activeContent ? ` (active content such as ${essence} must be listed by its exact type)` : ''
    throw new RequestError(415, `filetype '${filetype}' is not allowed; allowed: ${allowedTypes.join(', ')}${exactOnly}`)
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
 * The endpoint reads JSON only. Browsers send text/plain, form and multipart bodies cross-site
 * without asking first (no CORS preflight), so accepting them lets any page make a visitor's
 * browser call the endpoint with the visitor's cookies; JSON needs a preflight the endpoint
 * never grants to a stranger.
 */
export function checkJsonContentType(contentType: string | null): void {
  let essence: string | undefined
  try {
    essence = contentType === null ? undefined : parseMediaType(contentType).essence
  } catch {
    essence = undefined
  }
  if (essence !== 'application/json') {
    throw new RequestError(415, `Request body must be JSON sent with Content-Type: application/json, got ${describe(contentType ?? undefined)}`)
  }
}

/** `strategy` is this engine's marker, `_nextS3.strategy` next-s3-upload's ('aws-sdk' = token). */
function strategyOf(fields: Record<string, unknown>): Strategy {
  const { strategy, _nextS3 } = fields
  if (strategy !== undefined && strategy !== 'presigned' && strategy !== 'token') {
    throw badRequest(`strategy must be 'presigned' or 'token', got ${describe(strategy)}`)
  }
  let nextS3: Strategy | undefined
  if (_nextS3 !== undefined) {
    const marker = isObject(_nextS3) ? _nextS3.strategy : _nextS3
    if (marker !== 'presigned' && marker !== 'aws-sdk') {
      throw badRequest(`_nextS3.strategy must be 'presigned' or 'aws-sdk', got ${describe(marker)}`)
    }
    nextS3 = marker === 'presigned' ? 'presigned' : 'token'
  }
  if (strategy && nextS3 && strategy !== nextS3) {
    throw badRequest(`strategy '${strategy}' and _nextS3.strategy disagree`)
  }
  return strategy ?? nextS3 ?? 'token'
}

export function parsePartsRequest(body: unknown): PartsRequest {
  const fields = asObject(body)
  const { partNumbers } = fields
  if (!Array.isArray(partNumbers) || partNumbers.length === 0) {
    throw badRequest(`partNumbers must be a non-empty array of part numbers, got ${describe(partNumbers)}`)
  }
  if (partNumbers.length > MAX_PARTS_PER_REQUEST) {
    throw badRequest(`partNumbers may hold at most ${MAX_PARTS_PER_REQUEST} part numbers per request, got ${partNumbers.length}`)
  }
  for (const partNumber of partNumbers) checkPartNumberType(partNumber, 'partNumbers')
  const { contentMd5, sizes } = fields
  if (contentMd5 !== undefined) checkContentMd5(contentMd5, partNumbers as number[])
  if (sizes !== undefined) checkSizesShape(sizes, partNumbers as number[])
  return {
    ticket: ticketOf(fields),
    partNumbers: partNumbers as number[],
    contentMd5: contentMd5 as PartsRequest['contentMd5'],
    ...(sizes !== undefined && { sizes: sizes as NonNullable<PartsRequest['sizes']> }),
  }
}

/** `sizes` names exactly the parts asked for, each with a whole number of bytes (bounds come from the ticket: checkPartSizes). */
function checkSizesShape(sizes: unknown, partNumbers: readonly number[]) {
  if (!isObject(sizes)) throw badRequest(`sizes must be an object of part number → the part's length in bytes, got ${describe(sizes)}`)
  for (const [partNumber, size] of Object.entries(sizes)) {
    if (!partNumbers.includes(Number(partNumber))) throw badRequest(`sizes names part ${describe(partNumber)}, which is not among partNumbers`)
    if (!Number.isSafeInteger(size)) throw badRequest(`sizes[${partNumber}] must be the part's length in bytes, got ${describe(size)}`)
  }
  const missing = partNumbers.find((partNumber) => !Object.hasOwn(sizes, String(partNumber)))
  if (missing !== undefined) throw badRequest(`sizes must give the length of every part asked for: part ${missing} has none`)
}

/** Base64 of 16 bytes: what goes into a signed Content-MD5 header, and nothing else. */
const BASE64_MD5 = /^[A-Za-z0-9+/]{22}==$/

function checkContentMd5(contentMd5: unknown, partNumbers: readonly number[]) {
  if (!isObject(contentMd5)) throw badRequest(`contentMd5 must be an object of part number → base64 MD5, got ${describe(contentMd5)}`)
  for (const [partNumber, md5] of Object.entries(contentMd5)) {
    if (!partNumbers.includes(Number(partNumber))) {
      throw badRequest(`contentMd5 names part ${describe(partNumber)}, which is not among partNumbers`)
    }
    if (typeof md5 !== 'string' || !BASE64_MD5.test(md5)) {
      throw badRequest(`contentMd5[${partNumber}] must be the base64 MD5 of the part (24 characters), got ${describe(md5)}`)
    }
  }
}

export function parseCompleteRequest(body: unknown): CompleteRequest {
  const fields = asObject(body)
  const { parts } = fields
  // A single PUT's or token upload's ticket completes without parts.
  if (parts === undefined) return { ticket: ticketOf(fields) }
  if (!Array.isArray(parts) || parts.length === 0) {
    throw badRequest(`parts must be a non-empty array of { partNumber, etag }, got ${describe(parts)}`)
  }
  for (const [index, part] of parts.entries()) {
    if (!isObject(part)) throw badRequest(`parts[${index}] must be an object { partNumber, etag }, got ${describe(part)}`)
    checkPartNumberType(part.partNumber, `parts[${index}].partNumber`)
    if (typeof part.etag !== 'string' || part.etag === '' || part.etag.length > 1024 || CONTROL.test(part.etag)) {
      throw badRequest(`parts[${index}].etag must be the ETag storage returned for the part, got ${describe(part.etag)}`)
    }
  }
  return { ticket: ticketOf(fields), parts: parts as CompleteRequest['parts'] }
}

export function parseAbortRequest(body: unknown): AbortRequest {
  return { ticket: ticketOf(asObject(body)) }
}

/** POST …/refresh: the token ticket only, as /abort's body. */
export const parseRefreshRequest: (body: unknown) => RefreshRequest = parseAbortRequest

/** POST …/duplicates: the token ticket, and the upload in use to keep (absent when none was created). */
export function parseDuplicatesRequest(body: unknown): DuplicatesRequest {
  const object = asObject(body)
  const { keep } = object
  if (keep !== undefined && typeof keep !== 'string') throw badRequest('keep must be the upload id in use, or absent')
  return { ticket: ticketOf(object), ...(keep === undefined ? {} : { keep }) }
}

/**
 * `sizes` against an upload of unknown length: present, and each part 1..partSize bytes (only the
 * last part may be shorter than partSize, which storage enforces at Complete: EntityTooSmall).
 */
export function checkPartSizes(sizes: PartsRequest['sizes'], partSize: number): asserts sizes is NonNullable<PartsRequest['sizes']> {
  if (sizes === undefined) {
    throw badRequest('sizes is required for an upload of unknown length: give each part asked for its length in bytes')
  }
  for (const [partNumber, size] of Object.entries(sizes)) {
    if (size < 1 || size > partSize) throw badRequest(`sizes[${partNumber}] must be from 1 to the part size of ${partSize} bytes, got ${size}`)
  }
}

/** What bounds the parts of an upload of unknown length: the ticket's part size and the endpoint's limit. */
export interface UnknownSizeLimits {
  partSize: number
  maxFileSize: number | undefined
}

/**
 * Part numbers of an upload of unknown length: 1..`maxPartNumber` (protocol/parts.ts), above it
 * 413: more parts would hold more than the endpoint's `maxFileSize`, or than S3's 10 000 parts.
 */
export function checkUnknownSizePartNumbers(partNumbers: readonly number[], { partSize, maxFileSize }: UnknownSizeLimits): void {
  const below = partNumbers.find((n) => n < 1)
  if (below !== undefined) throw badRequest(`part number ${below} is below 1: parts are numbered from 1`)
  const highest = maxPartNumber(partSize, maxFileSize)
  const above = partNumbers.find((n) => n > highest)
  if (above === undefined) return
  const limit =
    maxFileSize === undefined || highest === MAX_PARTS
      ? `S3 allows at most ${MAX_PARTS} parts per upload`
      : `this endpoint accepts files of at most ${maxFileSize} bytes, which is ${highest} parts of ${partSize} bytes`
  throw new RequestError(413, `part number ${above} is over the limit: ${limit}`)
}

/** Complete of an upload of unknown length: its parts within the limits, each once (S3 checks the rest: InvalidPart, EntityTooSmall). */
export function checkUnknownSizeCompleteParts(parts: NonNullable<CompleteRequest['parts']>, limits: UnknownSizeLimits): void {
  checkUnknownSizePartNumbers(parts.map((part) => part.partNumber), limits)
  const seen = new Set(parts.map((part) => part.partNumber))
  if (seen.size !== parts.length) throw badRequest(`parts must list each part once, got ${parts.length} entries for ${seen.size} distinct parts`)
}

/** Part numbers against the ticket's plan: 1..partCount, each once. */
export function checkPartNumbers(partNumbers: readonly number[], partCount: number): void {
  const outside = partNumbers.find((n) => n < 1 || n > partCount)
  if (outside !== undefined) throw badRequest(`part number ${outside} is outside 1..${partCount}`)
}

/** Complete must list every planned part exactly once: 1..partCount. */
export function checkCompleteParts(parts: NonNullable<CompleteRequest['parts']>, partCount: number): void {
  checkPartNumbers(parts.map((part) => part.partNumber), partCount)
  const seen = new Set(parts.map((part) => part.partNumber))
  if (seen.size !== parts.length || parts.length !== partCount) {
    throw badRequest(`parts must list each of the ${partCount} planned parts exactly once, got ${parts.length} entries for ${seen.size} distinct parts`)
  }
}

/** Reads at most MAX_BODY_BYTES and parses them as a JSON object. */
export async function readJson(request: Request): Promise<unknown> {
  const declared = Number(request.headers.get('content-length') ?? 0)
  if (declared > MAX_BODY_BYTES) throw bodyTooLarge()
  const bytes = await readLimited(request, MAX_BODY_BYTES)
  const text = new TextDecoder().decode(bytes)
  if (text.trim() === '') throw badRequest('Request body must be JSON, got an empty body')
  try {
    return JSON.parse(text)
  } catch (error) {
    throw badRequest(`Request body is not valid JSON: ${(error as Error).message}`)
  }
}

async function readLimited(request: Request, limit: number): Promise<Uint8Array> {
  if (!request.body) return new Uint8Array()
  const reader = request.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
    size += chunk.value.byteLength
    if (size > limit) {
      // Not awaited: cancelling one branch of a tee (request.clone()) settles only when both are cancelled.
      reader.cancel().catch(() => {})
      throw bodyTooLarge()
    }
    chunks.push(chunk.value)
  }
  const bytes = new Uint8Array(size)
  let offset = 0
  for (const chunk of chunks) {
    bytes.set(chunk, offset)
    offset += chunk.byteLength
  }
  return bytes
}

function ticketOf(fields: Record<string, unknown>): string {
  const { ticket } = fields
  if (typeof ticket !== 'string' || ticket === '') {
    throw badRequest(`ticket must be the ticket string the upload request returned, got ${describe(ticket)}`)
  }
  return ticket
}

function checkPartNumberType(value: unknown, name: string) {
  if (!Number.isSafeInteger(value)) throw badRequest(`${name} must hold whole numbers, got ${describe(value)}`)
}

function asObject(body: unknown): Record<string, unknown> {
  if (!isObject(body)) throw badRequest(`Request body must be a JSON object, got ${describe(body)}`)
  return body
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

const badRequest = (message: string) => new RequestError(400, message)
export const notAuthorized = () => new RequestError(403, 'Not authorized to upload')
export const bodyTooLarge = () => new RequestError(413, `Request body must be at most ${MAX_BODY_BYTES} bytes`)

/** A short, safe rendering of what the client sent, for error messages. */
function describe(value: unknown): string {
  if (value === undefined) return 'nothing'
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (typeof value === 'object') return 'an object'
  if (typeof value === 'string') return value.length > 40 ? `a string of ${value.length} characters` : JSON.stringify(value)
  return `${typeof value} ${String(value)}`
}
