import { MAX_KEY_BYTES } from '../protocol/limits.ts'

export const DEFAULT_KEY_PREFIX = 'next-s3-uploads'

/**
 * A default key's name is cut to 255 characters, the longest file name common file systems
 * hold: a longer one cannot be a real file's, and keys stay short enough that the token policy
 * naming one (server/sts.ts) stays far from the length that crashes Ceph 16.2's radosgw.
 */
const MAX_NAME_LENGTH = 255
/** `{prefix}{uuid}/` takes the prefix, 36 characters of UUID and a slash; a key is at most 1024 bytes. */
const nameRoom = (prefix: string) => Math.min(MAX_NAME_LENGTH, MAX_KEY_BYTES - new TextEncoder().encode(prefix).length - 37)

/**
 * next-s3-upload's rule — characters outside `0-9 a-z A-Z ! _ . ' ( ) -` become a space, runs of
 * whitespace become `-` — minus what it let through for path tricks and wildcards:
 * - `/` and `\` are not kept, and runs of dots shrink to one, so no `..` (or `.`) segment exists;
 * - `*` is dropped too: it is a wildcard in the `Resource` of the token policy, so a key holding it
 *   would grant more than one object (RGW has no `${*}` escape; checked on Ceph 16.2).
 * The result is ASCII, never empty, never `.`, and at most 255 characters (the extension kept).
 */
export function sanitizeFilename(filename: string, maxLength = MAX_NAME_LENGTH): string {
  let name = filename
    .replace(/[^0-9a-zA-Z!_.'()-]/g, ' ')
    .replace(/\s+/g, '-')
    .replace(/\.{2,}/g, '.')
  if (name === '' || name === '.' || name === '-') name = 'file'
  return name.length <= maxLength ? name : truncateKeepingExtension(name, maxLength)
}

/** `{prefix}{uuid}/{sanitized filename}` (config.keyPrefix, `next-s3-uploads/` by default): unique, and at most 1024 bytes. */
export const defaultKey = (filename: string, prefix = `${DEFAULT_KEY_PREFIX}/`) =>
  `${prefix}${crypto.randomUUID()}/${sanitizeFilename(filename, nameRoom(prefix))}`

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
