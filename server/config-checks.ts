// What resolveConfig checks each setting against (server/config.ts): pure, each message naming the
// setting, what it must be and what it got.

/** The prefix goes into an IAM Resource followed by `*`: a wildcard or control character in it would widen or break that. */
export function checkKeyPrefix(prefix: string) {
  if (
    typeof prefix !== 'string' ||
    prefix === '' ||
    prefix.length > 512 ||
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
    /[*?$\\\u0000-\u001f\u007f]/.test(prefix) ||
    prefix.startsWith('/') ||
    /(^|\/)\.\.?(\/|$)/.test(prefix)
  ) {
    throw new TypeError(
      `updraft: keyPrefix must be a non-empty key prefix of at most 512 characters, with no leading '/', no '.' or '..' segment, and none of * ? $ \\ or control characters, got ${JSON.stringify(prefix)}`,
    )
  }
}

export function checkContentDisposition(value: string | undefined) {
  if (
    value !== undefined &&
    (typeof value !== 'string' || value.trim() === '' || value.length > 1024 || /[^\x20-\x7e]/.test(value))
  ) {
    throw new TypeError(
      `updraft: contentDisposition must be printable ASCII such as 'attachment', got ${JSON.stringify(value)}`,
    )
  }
}

export function checkOrigin(origin: string) {
  let parsed: string | undefined
  try {
    parsed = new URL(origin).origin
  } catch {
    parsed = undefined
  }
  if (parsed !== origin || parsed === 'null') {
    throw new TypeError(
      `updraft: allowedOrigins must hold origins such as 'https://app.example.com' (scheme, host, port; no path), got '${origin}'`,
    )
  }
}

export function checkNumber(name: string, value: number, min: number, max = Number.MAX_SAFE_INTEGER) {
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `of at least ${min}` : `from ${min} to ${max}`
    throw new RangeError(`updraft: ${name} must be a whole number ${range}, got ${value}`)
  }
}

/**
 * The handler's `path` as routes compare against it: no trailing `/` (`'/'` becomes `''`). It is
 * matched against `new URL(request.url).pathname`, so it is a path, never a URL or a pattern.
 */
export function mountPath(path: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
  if (typeof path !== 'string' || !path.startsWith('/') || /[?#*:\s\u0000-\u001f\u007f]|\/\//.test(path)) {
    throw new TypeError(
      `updraft: path must be the URL path the handler is mounted at, such as '/api/s3-upload' (a leading '/', no query, pattern or '//'), got ${JSON.stringify(path)}`,
    )
  }
  return path.replace(/\/+$/, '')
}
