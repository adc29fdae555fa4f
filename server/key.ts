import { MAX_KEY_BYTES } from '../protocol/limits.ts'

export const DEFAULT_KEY_PREFIX = 'next-s3-uploads'

/**
 * A default key's name (its folders and file name together) is cut to 255 bytes of UTF-8, the
 * longest file name common file systems hold: a longer one cannot be a real file's, and keys
 * stay short enough that the token policy naming one (server/sts.ts) stays far from the length
 * that crashes Ceph 16.2's radosgw.
 */
const MAX_NAME_BYTES = 255
/** Folders kept from a relative path (`photos/2024/day-1/a.jpg`); deeper trees keep their innermost ones. */
const MAX_FOLDERS = 8
/** `{prefix}{uuid}/` takes the prefix, 36 characters of UUID and a slash; a key is at most 1024 bytes. */
const nameRoom = (prefix: string) => Math.min(MAX_NAME_BYTES, MAX_KEY_BYTES - utf8Length(prefix) - 37)

/**
 * Anything but letters, combining marks and digits of any script, and `! _ . ' ( ) -`: next-s3-upload
 * kept ASCII letters only, so `写真.jpg` became `-.jpg`. What is dropped is what is unsafe in a key
 * or the token policy's IAM `Resource`: `/` and `\` (path tricks), `*` and `?` (IAM wildcards), `$`
 * (policy variables), control and format characters (invisible, or reordering text: U+202E), and
 * symbols such as emoji, which no key needs.
 */
const UNSAFE = /[^\p{L}\p{M}\p{N}!_.'()-]/gu

/**
 * One segment of a key, from a file name: NFC-normalised (a macOS `é` is `e` + U+0301, a Windows
 * one U+00E9: both give the same key), unsafe characters as a space, runs of whitespace as `-`,
 * runs of dots as one (so no `.` or `..` segment exists). Never empty, never `.`; at most
 * `maxBytes` of UTF-8, the extension kept when cut. ASCII names give next-s3-upload's result,
 * minus its `*`. Never throws.
 *
 * @example
 * ```ts
 * createUploadHandler({ key: (request, filename) => `users/${userOf(request)}/${crypto.randomUUID()}/${sanitizeFilename(filename)}` })
 * sanitizeFilename('résumé 📄 final.pdf') // 'résumé-final.pdf'
 * ```
 */
export function sanitizeFilename(filename: string, maxBytes = MAX_NAME_BYTES): string {
  let name = filename
    .normalize('NFC')
    .replace(UNSAFE, ' ')
    .replace(/\s+/g, '-')
    .replace(/\.{2,}/g, '.')
  if (name === '' || name === '.' || name === '-') name = 'file'
  return utf8Length(name) <= maxBytes ? name : truncateKeepingExtension(name, maxBytes)
}

/**
 * A relative path (`holiday/day 1/写真.jpg`, from a dropped or picked folder) as key segments:
 * `/` and `\` separate, empty, `.` and `..` segments are dropped (no path leaves the upload's own
 * `{uuid}/` folder), each segment is sanitised as a file name. The file name gets the room it
 * needs first; folders follow, innermost first, while they fit in `maxBytes` (at most 8).
 * Never throws.
 *
 * @example
 * ```ts
 * sanitizePath('holiday/../day 1/a.jpg') // 'holiday/day-1/a.jpg'
 * ```
 */
export function sanitizePath(path: string, maxBytes = MAX_NAME_BYTES): string {
  const segments = path.split(/[/\\]+/).filter((segment) => segment !== '' && segment !== '.' && segment !== '..')
  const file = sanitizeFilename(segments.pop() ?? '', maxBytes)
  let name = file
  for (const folder of segments.reverse().slice(0, MAX_FOLDERS)) {
    const safe = sanitizeFilename(folder, maxBytes)
    if (utf8Length(name) + 1 + utf8Length(safe) > maxBytes) break
    name = `${safe}/${name}`
  }
  return name
}

/**
 * `{prefix}{uuid}/{sanitized relative path}` (config.keyPrefix, `next-s3-uploads/` by default):
 * unique, and at most 1024 bytes. A plain file name gives one segment, as next-s3-upload's keys.
 * What the handler uses when its config has no `key`; call it from your own `key` callback to
 * keep the default and add to it. Never throws.
 *
 * @example
 * ```ts
 * createUploadHandler({ key: (request, filename) => defaultKey(filename, `tenants/${tenantOf(request)}/`) })
 * ```
 */
export const defaultKey = (filename: string, prefix = `${DEFAULT_KEY_PREFIX}/`) =>
  `${prefix}${crypto.randomUUID()}/${sanitizePath(filename, nameRoom(prefix))}`

/**
 * Checks a key from the caller's `key` callback. A bad one is a server bug, not a client mistake,
 * so this throws a plain TypeError (→ 500, details in the log).
 */
export function checkKey(key: unknown): string {
  if (typeof key !== 'string' || key === '') {
    throw new TypeError(`updraft: the key callback must return a non-empty string, got ${describe(key)}`)
  }
  const bytes = utf8Length(key)
  if (bytes > MAX_KEY_BYTES) {
    throw new TypeError(`updraft: the key callback returned a key of ${bytes} bytes; S3 allows ${MAX_KEY_BYTES}`)
  }
  // Control characters break XML replies and headers; `.`/`..` segments are resolved away by URL parsers.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
  if (/[\u0000-\u001f\u007f]/.test(key) || /(^|\/)\.\.?(\/|$)/.test(key) || key.includes('\\')) {
    throw new TypeError(
      `updraft: the key callback returned a key with control characters, '\\', or '.'/'..' segments: ${JSON.stringify(key)}`,
    )
  }
  return key
}

/** Cut by whole code points (never half a surrogate pair), so the result is valid UTF-8 of at most `maxBytes`. */
function truncateKeepingExtension(name: string, maxBytes: number): string {
  const dot = name.lastIndexOf('.')
  const extension = dot > 0 && name.length - dot <= 16 ? name.slice(dot) : ''
  let room = maxBytes - utf8Length(extension)
  let kept = ''
  for (const char of name.slice(0, name.length - extension.length)) {
    room -= utf8Length(char)
    if (room < 0) break
    kept += char
  }
  // A cut that ends on a dot, before the extension's, must not make a `..`.
  return (kept + extension).replace(/\.{2,}/g, '.')
}

const utf8Length = (text: string) => new TextEncoder().encode(text).length

const describe = (value: unknown) => (typeof value === 'string' ? "''" : typeof value)
