/**
 * One RFC 9110 media type (https://www.rfc-editor.org/rfc/rfc9110#name-media-type), parsed strictly
 * and serialised in one canonical form, and which types a browser would run as script on the
 * origin that serves them. Pure: no Node, no DOM, so a page can run it as well as the upload API.
 *
 *   media-type = type "/" subtype parameters
 *   parameters = *( OWS ";" OWS [ parameter ] )
 *   parameter  = name "=" ( token / quoted-string )
 */

/** A parsed media type; `value` is what gets signed as the object's Content-Type. */
export interface MediaType {
  /** `type/subtype`, lower-cased: what `allowedTypes` and the active-content list match. */
  essence: string
  /** Names lower-cased, values as sent (unquoted), in order. */
  parameters: ReadonlyArray<readonly [name: string, value: string]>
  /** Canonical form: `essence` then `; name=value` for each parameter, quoted only where needed. */
  value: string
}

/** Why a string is not one media type; the message says what to send instead. */
export class MediaTypeError extends TypeError {
  override name = 'MediaTypeError'
}

// RFC 9110 §5.6.2: tchar = "!" / "#" / "$" / "%" / "&" / "'" / "*" / "+" / "-" / "." / "^" / "_" / "`" / "|" / "~" / DIGIT / ALPHA
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/
const TOKEN_CHAR = /[!#$%&'*+\-.^_`|~0-9A-Za-z]/
const OWS = /[ \t]/

/**
 * Exactly one media type, or a MediaTypeError. Beyond the grammar it refuses:
 * - any comma, even inside a quoted string: browsers read `image/png, text/html` as a list and
 *   use the last type, so an object signed with it was rendered as HTML (issue 10);
 * - characters outside printable ASCII (obs-text is obsolete, and header values must stay ASCII);
 * - `*` in type or subtype (`image/*` is a range to match against, never a type to serve);
 * - a parameter named twice (which one a reader honours is anyone's guess).
 */
export function parseMediaType(input: string): MediaType {
  if (/[^\x20-\x7e\t]/.test(input)) {
    throw new MediaTypeError('must be printable ASCII, such as image/png')
  }
  if (input.includes(',')) {
    throw new MediaTypeError('must be one media type, not a list: no commas')
  }
  const text = input.replace(/^[ \t]+|[ \t]+$/g, '')
  let at = 0
  const readToken = () => {
    const start = at
    while (at < text.length && TOKEN_CHAR.test(text[at]!)) at++
    return text.slice(start, at)
  }
  const skipOws = () => {
    while (at < text.length && OWS.test(text[at]!)) at++
  }

  const type = readToken()
  if (type === '' || text[at] !== '/') throw new MediaTypeError('must be type/subtype, such as image/png')
  at++
  const subtype = readToken()
  if (subtype === '') throw new MediaTypeError('must be type/subtype, such as image/png')
  if (type.includes('*') || subtype.includes('*')) {
    throw new MediaTypeError('must be a media type, not a range with *')
  }

  const parameters: Array<[string, string]> = []
  while (at < text.length) {
    skipOws()
    if (text[at] !== ';')
      throw new MediaTypeError(`has unexpected text at character ${at + 1}; parameters follow ';' as name=value`)
    at++
    skipOws()
    // An empty parameter (`;;` or a trailing `;`) is allowed by the grammar and dropped.
    if (at >= text.length || text[at] === ';') continue
    const name = readToken().toLowerCase()
    if (name === '' || text[at] !== '=') throw new MediaTypeError('has a parameter that is not name=value')
    at++
    const quoted = text[at] === '"'
    const value = quoted ? readQuoted() : readToken()
    if (value === undefined) throw new MediaTypeError('has an unterminated quoted parameter value')
    if (!quoted && value === '') throw new MediaTypeError(`has an empty value for parameter ${name}`)
    if (parameters.some(([seen]) => seen === name)) throw new MediaTypeError(`names parameter ${name} twice`)
    parameters.push([name, value])
  }

  const essence = `${type}/${subtype}`.toLowerCase()
  const value = essence + parameters.map(([name, v]) => `; ${name}=${TOKEN.test(v) ? v : quote(v)}`).join('')
  return { essence, parameters, value }

  /** A quoted-string from `at` (on its opening quote); undefined when it never closes. */
  function readQuoted(): string | undefined {
    let out = ''
    for (at++; at < text.length; at++) {
      const c = text[at]!
      if (c === '"') {
        at++
        return out
      }
      if (c === '\\') {
        at++
        if (at >= text.length) return undefined
        out += text[at]
      } else {
        out += c
      }
    }
    return undefined
  }
}

const quote = (value: string) => `"${value.replace(/["\\]/g, '\\$&')}"`

/**
 * Types a browser runs as script, or renders as a document that can hold script, when it opens
 * the object: HTML and every XML type (an XML document may carry XHTML `<script>`), SVG, XSLT,
 * JavaScript, Flash, `multipart/x-mixed-replace`, and the types the WHATWG MIME Sniffing standard
 * sniffs as HTML (`unknown/unknown`, `application/unknown`; §7.1, "supplied MIME type is undefined").
 */
const ACTIVE_TYPES = new Set([
  'text/html',
  'application/xhtml+xml',
  'image/svg+xml',
  'text/xml',
  'application/xml',
  'text/xsl',
  'application/x-shockwave-flash',
  'multipart/x-mixed-replace',
  'unknown/unknown',
  'application/unknown',
])

/** Whether a browser would run this type (an essence from `parseMediaType`) on the object's origin. */
export function isActiveContent(essence: string): boolean {
  const subtype = essence.slice(essence.indexOf('/') + 1)
  return (
    ACTIVE_TYPES.has(essence) ||
    subtype.endsWith('+xml') ||
    subtype === 'xml' ||
    /(java|ecma|j|live)script/.test(subtype)
  )
}

/**
 * Whether `essence` is allowed by `allowedTypes` (exact types and `type/*` patterns). Active
 * content must be named exactly: `image/*` does not let `image/svg+xml` through.
 */
export function matchesAllowedType(essence: string, allowedTypes: readonly string[]): boolean {
  const active = isActiveContent(essence)
  return allowedTypes.some((allowed) => {
    const pattern = allowed.trim().toLowerCase()
    if (pattern === essence) return true
    return !active && pattern.endsWith('/*') && essence.startsWith(pattern.slice(0, -1))
  })
}
