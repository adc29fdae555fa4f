import { MAX_METADATA_BYTES } from '../protocol/limits.ts'
import type { MetadataValidator } from './config.ts'
import { RequestError } from './request-error.ts'

/**
 * The page's `metadata` as the `metadata` option accepts it: validated once, at the upload
 * request, then carried in the ticket (so it must be small JSON) and never read from the page again.
 */
export async function validateMetadata(
  validator: MetadataValidator<unknown> | undefined,
  sent: unknown,
  request: Request,
): Promise<unknown> {
  if (!validator) {
    if (sent === undefined) return undefined
    throw new RequestError(
      400,
      'This upload API takes no metadata: send none, or give the server a `metadata` option that validates it',
    )
  }
  let valid: unknown
  try {
    valid = typeof validator === 'function' ? await validator(sent, request) : validator.parse(sent)
  } catch (error) {
    if (error instanceof RequestError) throw error
    throw new RequestError(400, `metadata is not valid: ${describeRefusal(error)}`)
  }
  if (valid === undefined) return undefined
  const bytes = new TextEncoder().encode(JSON.stringify(valid) ?? '').length
  if (bytes > MAX_METADATA_BYTES) {
    throw new RequestError(413, `metadata must be at most ${MAX_METADATA_BYTES} bytes of JSON, got ${bytes}`)
  }
  return valid
}

/** A validator's refusal in one line: zod-like `issues` as `path: message`, else the error's message. */
function describeRefusal(error: unknown): string {
  const issues = (error as { issues?: Array<{ path?: unknown[]; message?: string }> }).issues
  const text = Array.isArray(issues)
    ? issues.map(({ path, message }) => (path?.length ? `${path.join('.')}: ${message}` : String(message))).join('; ')
    : error instanceof Error
      ? error.message
      : String(error)
  return text.length > 300 ? `${text.slice(0, 300)}…` : text
}
