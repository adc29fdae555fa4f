/**
 * What the upload API accepts from a page, checked field by field with messages that say what to
 * change. Pure (no Node, no SDK), so every runtime the handler runs on can run it.
 */
import { MediaTypeError, parseMediaType } from '../protocol/content-type.ts'
import { DEFAULT_CONTENT_TYPE } from '../protocol/file-limits.ts'
import {
  MAX_BATCH_FILES,
  MAX_FILENAME_BYTES,
  MAX_FILETYPE_LENGTH,
  MAX_OBJECT_SIZE,
  MAX_PARTS_PER_REQUEST,
} from '../protocol/limits.ts'
import type {
  AbortRequest,
  CompleteRequest,
  DuplicatesRequest,
  PartsRequest,
  RefreshRequest,
  Strategy,
} from '../protocol/wire.ts'
import { badRequest, describeValue as describe, RequestError } from './request-error.ts'

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
  /** Token mode: the page asks the upload API to create the multipart upload (UploadRequest.createMultipart). */
  createMultipart: boolean
  strategy: Strategy
  body: Record<string, unknown>
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
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
    throw badRequest(
      `filetype must be a string of at most ${MAX_FILETYPE_LENGTH} printable characters, got ${describe(filetype)}`,
    )
  }
  const mediaType = filetype === '' ? undefined : parseFiletype(filetype)
  if (filesize !== undefined && !(Number.isSafeInteger(filesize) && (filesize as number) >= 0)) {
    throw badRequest(`filesize must be a whole number of bytes (0 or more), got ${describe(filesize)}`)
  }
  if (typeof filesize === 'number' && filesize > MAX_OBJECT_SIZE) {
    throw new RequestError(
      413,
      `filesize ${filesize} is over S3's limit of ${MAX_OBJECT_SIZE} bytes (5 TiB) per object`,
    )
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
    throw badRequest(
      'createMultipart needs the filesize: only an upload of declared length is created by the upload API',
    )
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

function parseFiletype(filetype: string) {
  try {
    return parseMediaType(filetype)
  } catch (error) {
    if (error instanceof MediaTypeError) throw badRequest(`filetype ${describe(filetype)} ${error.message}`)
    throw error
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
    throw badRequest(
      `partNumbers may hold at most ${MAX_PARTS_PER_REQUEST} part numbers per request, got ${partNumbers.length}`,
    )
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
  if (!isObject(sizes))
    throw badRequest(`sizes must be an object of part number → the part's length in bytes, got ${describe(sizes)}`)
  for (const [partNumber, size] of Object.entries(sizes)) {
    if (!partNumbers.includes(Number(partNumber)))
      throw badRequest(`sizes names part ${describe(partNumber)}, which is not among partNumbers`)
    if (!Number.isSafeInteger(size))
      throw badRequest(`sizes[${partNumber}] must be the part's length in bytes, got ${describe(size)}`)
  }
  const missing = partNumbers.find((partNumber) => !Object.hasOwn(sizes, String(partNumber)))
  if (missing !== undefined)
    throw badRequest(`sizes must give the length of every part asked for: part ${missing} has none`)
}

/** Base64 of 16 bytes: what goes into a signed Content-MD5 header, and nothing else. */
const BASE64_MD5 = /^[A-Za-z0-9+/]{22}==$/

function checkContentMd5(contentMd5: unknown, partNumbers: readonly number[]) {
  if (!isObject(contentMd5))
    throw badRequest(`contentMd5 must be an object of part number → base64 MD5, got ${describe(contentMd5)}`)
  for (const [partNumber, md5] of Object.entries(contentMd5)) {
    if (!partNumbers.includes(Number(partNumber))) {
      throw badRequest(`contentMd5 names part ${describe(partNumber)}, which is not among partNumbers`)
    }
    if (typeof md5 !== 'string' || !BASE64_MD5.test(md5)) {
      throw badRequest(
        `contentMd5[${partNumber}] must be the base64 MD5 of the part (24 characters), got ${describe(md5)}`,
      )
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
    if (!isObject(part))
      throw badRequest(`parts[${index}] must be an object { partNumber, etag }, got ${describe(part)}`)
    checkPartNumberType(part.partNumber, `parts[${index}].partNumber`)
    if (typeof part.etag !== 'string' || part.etag === '' || part.etag.length > 1024 || CONTROL.test(part.etag)) {
      throw badRequest(
        `parts[${index}].etag must be the ETag storage returned for the part, got ${describe(part.etag)}`,
      )
    }
  }
  return { ticket: ticketOf(fields), parts: parts as CompleteRequest['parts'] }
}

/**
 * `/batch` and `/batch/complete`: `files`, 1..MAX_BATCH_FILES entries. Only the list is judged
 * here; each entry is parsed on its own (parseUploadRequest, parseCompleteRequest), so one bad
 * entry is refused alone.
 */
export function parseBatchRequest(body: unknown): unknown[] {
  const { files } = asObject(body)
  if (!Array.isArray(files) || files.length === 0) {
    throw badRequest(`files must be a non-empty array with one entry per file, got ${describe(files)}`)
  }
  if (files.length > MAX_BATCH_FILES) {
    throw badRequest(
      `files may hold at most ${MAX_BATCH_FILES} entries per request, got ${files.length}: send the rest in another request`,
    )
  }
  return files
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
