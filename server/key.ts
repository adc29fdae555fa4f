import { MAX_KEY_BYTES } from '../protocol/limits.ts'

export const DEFAULT_KEY_PREFIX = 'next-s3-uploads'

/**
 * `next-s3-uploads/{uuid}/` is 53 bytes (a UUID is 36 characters); the name gets the rest.
 * Counted, not measured on a sample UUID: Workers refuse random values at module scope.
 */
const MAX_NAME_LENGTH = MAX_KEY_BYTES - `${DEFAULT_KEY_PREFIX}//`.length - 36

/**
 * next-s3-upload's rule — characters outside `0-9 a-z A-Z ! _ . ' ( ) -` become a space, runs of
 * whitespace become `-` — minus what it let through for path tricks and wildcards:
 * - `/` and `\` are not kept, and runs of dots shrink to one, so no `..` (or `.`) segment exists;
 * - `*` is dropped too: it is a wildcard in the `Resource` of the token policy, so a key holding it
 *   would grant more than one object (RGW has no `${*}` escape; checked on Ceph 16.2).
 * The result is ASCII, never empty, never `.`, and at most 971 characters (the extension kept).
 */
export function sanitizeFilename(filename: string): string {
  let name = filename
    .replace(/[^0-9a-zA-Z!_.'()-]/g, ' ')
    .replace(/\s+/g, '-')
    .replace(/\.{2,}/g, '.')
  if (name === '' || name === '.' || name === '-') name = 'file'
  return name.length <= MAX_NAME_LENGTH ? name : truncateKeepingExtension(name, MAX_NAME_LENGTH)
}

/** `next-s3-uploads/{uuid}/{sanitized filename}`: unique, and at most 1024 bytes. */
export const defaultKey = (filename: string) =>
  `${DEFAULT_KEY_PREFIX}/${crypto.randomUUID()}/${sanitizeFilename(filename)}`

/**
 * Checks a key from the caller's `key` callback. A bad one is a server bug, not a client mistake,
 * so this throws a plain TypeError (→ 500, details in the log).
 */
export function checkKey(key: unknown): string {
  if (typeof key !== 'string' || key === '') {
    throw new TypeError(`updraft: the key callback must return a non-empty string, got ${describe(key)}`)
  }
  const bytes = new TextEncoder().encode(key).length
  if (bytes > MAX_KEY_BYTES) {
    throw new TypeError(`updraft: the key callback returned a key of ${bytes} bytes; S3 allows ${MAX_KEY_BYTES}`)
  }
  // Control characters break XML replies and headers; `.`/`..` segments are resolved away by URL parsers.
  if (/[\u0000-\u001f\u007f]/.test(key) || /(^|\/)\.\.?(\/|$)/.test(key) || key.includes('\\')) {
    throw new TypeError(`updraft: the key callback returned a key with control characters, '\\', or '.'/'..' segments: ${JSON.stringify(key)}`)
  }
  return key
}

function truncateKeepingExtension(name: string, max: number): string {
  const dot = name.lastIndexOf('.')
  const extension = dot > 0 && name.length - dot <= 16 ? name.slice(dot) : ''
  return name.slice(0, max - extension.length) + extension
}

const describe = (value: unknown) => (typeof value === 'string' ? "''" : typeof value)
