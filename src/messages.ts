/**
 * What happened to an upload, in words for the person who picked the file: built from the typed
 * errors' fields (class, status, S3 code, refusal figures), never by matching message text. The
 * developer's message stays in `error.message`.
 */
// The errors' own module, not the engine's entry: a bundle that reaches the entry holds its every
// module in the page's chunks (esbuild), resume's too, which the recording entry loads lazily.
import { ApiError, NetworkError, S3Error, UploadError } from '../engine/core/errors.ts'
import type { UploadLimits } from '../protocol/file-limits.ts'
import { FileRefusedError } from './file-checks.ts'
import { formatBytes, overLimit } from './format.ts'

/** What {@link errorMessage} may use to say more: the file, the limits, whether it retries. */
export interface MessageContext {
  /** The file, for its size and type in "60 MiB is over the 30 MiB limit". */
  file?: File
  /** The upload API's limits (from `/info`), to name the limit a 413 or 415 broke. */
  limits?: UploadLimits
  /** The engine will try again: "Connection lost — retrying". */
  retrying?: boolean
}

/**
 * One short sentence for the person who picked the file: what went wrong, and what to do when
 * there is something to do ("60 MiB is over the 30 MiB limit", "Connection lost — retrying").
 * Built from the typed errors' fields, never from message text; anything else gets a generic
 * sentence. Never throws.
 *
 * @example
 * ```tsx
 * {entry.error && <p role="alert">{errorMessage(entry.error, { file: entry.file, limits, retrying: entry.status === 'retrying' })}</p>}
 * ```
 */
export function errorMessage(error: unknown, { file, limits, retrying }: MessageContext = {}): string {
  if (error instanceof FileRefusedError) {
    const { refusal } = error
    if (refusal.reason === 'too-large') return overLimit(refusal.size, refusal.maxFileSize)
    return refusedType(refusal.essence, error.file.name, refusal.allowedTypes)
  }
  if ((error as Error | undefined)?.name === 'AbortError') return 'Cancelled'
  // By name: the hook loads PrepareError only with a `prepare`, and this module ships without it.
  if ((error as Error | undefined)?.name === 'PrepareError')
    return "This site could not prepare this file for upload — nothing was sent; retrying won't help"
  if (error instanceof NetworkError) return networkMessage(error, retrying)
  // The server's verdict on stored bytes (size, type, file signature) is written for people, and specific.
  if (error instanceof ApiError && error.status === 422) return error.message
  // The same words for every file, whatever its size; what to change is in the server's log, not here.
  if (error instanceof ApiError && error.code === 'ServerMisconfigured')
    return "This site's upload service is misconfigured — its owner has to fix it; retrying won't help"
  if (error instanceof ApiError) return apiErrorMessage(error.status, file, limits, retrying)
  if (error instanceof S3Error) return storageMessage(error, retrying)
  // The engine's own errors (e.g. a bucket CORS rule hiding ETags) are written for people already.
  if (error instanceof UploadError) return error.message
  return `Something went wrong: ${(error as Error | undefined)?.message ?? String(error)}`
}

/**
 * A request got no reply the page may read. Offline, the connection is the cause. Online, the page
 * names what it could not reach (a refused connection and a dropped one look alike to a browser):
 * the upload API, or storage. Once the retries are spent, storage may also have refused with a
 * reply its CORS rules hide (OpenStack Swift never puts CORS headers on error replies; R2 and
 * others not on every one): an expired URL or a refused signature shows as a bare network error.
 */
function networkMessage({ to, origin }: NetworkError, retrying?: boolean): string {
  if (globalThis.navigator?.onLine === false)
    return retrying ? 'Connection lost — retrying' : "You're offline — reconnect, then retry"
  const where = origin ? ` at ${origin}` : ''
  if (to === 'api')
    return `Can't reach the upload API${where} — ${retrying ? 'retrying' : 'it may be down; retry later'}`
  if (to === 'storage' && retrying) return `Can't reach storage${where} — retrying`
  if (retrying) return 'Connection lost — retrying'
  return `Storage${where} sent no reply this page can read — it is out of reach, or refused (an expired link, a refused signature) with a reply its CORS rules hide. Retry; if it fails again, the site's owner should check storage's CORS rules, clock and keys`
}

/**
 * Whether no retry can change how the upload ended: the file's type or size is refused, `prepare` failed on it, the
 * server checked the stored bytes and refused them, or the server is misconfigured. A component
 * offers no Retry for these.
 */
export function isFinal(error: unknown): boolean {
  if (error instanceof FileRefusedError || (error as Error | undefined)?.name === 'PrepareError') return true
  if (error instanceof ApiError) return error.code === 'ServerMisconfigured' || [413, 415, 422].includes(error.status)
  // Storage refused the signature or the key itself: the server signs the same way next time.
  return (
    error instanceof S3Error && ['SignatureDoesNotMatch', 'InvalidAccessKeyId', 'NoSuchBucket'].includes(error.code)
  )
}

function apiErrorMessage(
  status: number,
  file: File | undefined,
  limits: UploadLimits = {},
  retrying?: boolean,
): string {
  if (status === 413) {
    if (file && limits.maxFileSize !== undefined) return overLimit(file.size, limits.maxFileSize)
    return `${file ? formatBytes(file.size) : 'This file'} is over this site's size limit`
  }
  if (status === 415) return refusedType(file?.type || undefined, file?.name, limits.allowedTypes)
  if (status === 401 || status === 403) return "The server didn't allow this upload — sign in again, or reload the page"
  if (status === 429)
    return retrying
      ? 'Too many uploads at once — waiting to retry'
      : 'Too many uploads at once — wait a minute, then retry'
  if (status >= 500 || status === 408)
    return retrying ? 'The server had a problem — retrying' : 'The server had a problem — try again'
  return "The server refused this upload — it may be a fault in this site; retrying won't help"
}

function storageMessage({ code, status }: S3Error, retrying?: boolean): string {
  if (code === 'RequestTimeTooSkewed') return "Your device's clock is wrong — set it right, then retry"
  if (code === 'ExpiredToken' || code === 'TokenRefreshRequired') return 'The permission to upload expired — retry'
  if (code === 'EntityTooLarge') return 'Storage refused this file as too large'
  if (code === 'SignatureDoesNotMatch' || code === 'InvalidAccessKeyId')
    return "Storage refused this site's upload signature — its owner has to fix its storage key; retrying won't help"
  if (code === 'NoSuchBucket')
    return "This site's storage bucket does not exist — its owner has to fix it; retrying won't help"
  if (code === 'AccessDenied' || status === 403) return 'Storage refused the upload (access denied)'
  if (code === 'SlowDown' || status === 503 || status === 429)
    return retrying ? 'Storage is busy — retrying' : 'Storage is busy — try again in a moment'
  if (status >= 500) return retrying ? 'Storage had a problem — retrying' : 'Storage had a problem — try again'
  return `Storage refused the upload (${code})`
}

/** "PDFs aren't accepted here — only images and videos". */
function refusedType(
  essence: string | undefined,
  name: string | undefined,
  allowedTypes: readonly string[] | undefined,
): string {
  const what = typeName(essence, name)
  const allowed = allowedTypes?.length ? ` — only ${listOf(allowedTypes.map((type) => typeName(type)))}` : ''
  return `${capitalise(what)} aren't accepted here${allowed}`
}

const TYPE_NAMES: Record<string, string> = {
  'application/pdf': 'PDFs',
  'image/*': 'images',
  'video/*': 'videos',
  'audio/*': 'audio files',
  'text/*': 'text files',
  'text/plain': 'text files',
  'text/html': 'web pages (HTML)',
  'image/svg+xml': 'SVG images',
  'application/zip': 'ZIP archives',
  'application/json': 'JSON files',
  'application/octet-stream': 'files of unknown type',
}

/** What people call a type: "PDFs", "images"; else the file's extension ("DOCX files") or the type itself. */
export function typeName(type: string | undefined, name?: string): string {
  const known = type === undefined ? undefined : TYPE_NAMES[type.toLowerCase()]
  if (known) return known
  const extension = name?.match(/\.([^.]{1,8})$/)?.[1]
  if (extension) return `${extension.toUpperCase()} files`
  if (type?.endsWith('/*')) return `${type.slice(0, -2)} files`
  return type ? `${type} files` : 'files of unknown type'
}

/** "images, videos and PDFs". */
function listOf(items: string[]): string {
  const unique = [...new Set(items)]
  return unique.length <= 1 ? (unique[0] ?? '') : `${unique.slice(0, -1).join(', ')} and ${unique.at(-1)}`
}

/**
 * The limits in words for a dropzone: "Images and PDFs, up to 30 MiB each"; undefined without
 * limits. Never throws.
 */
export function describeLimits({ maxFileSize, allowedTypes }: UploadLimits): string | undefined {
  const types = allowedTypes?.length ? capitalise(listOf(allowedTypes.map((type) => typeName(type)))) : undefined
  const size =
    maxFileSize === undefined ? undefined : `up to ${formatBytes(maxFileSize)}${types ? ' each' : ' per file'}`
  if (types && size) return `${types}, ${size}`
  return types ?? (size && capitalise(size))
}

const capitalise = (text: string) => text.charAt(0).toUpperCase() + text.slice(1)
