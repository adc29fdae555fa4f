import { parseMediaType } from '../protocol/content-type.ts'
import { MAX_BODY_BYTES } from '../protocol/limits.ts'
import { badRequest, bodyTooLarge, describeValue, RequestError } from './request-error.ts'

// Reading a request's body as the upload API accepts it: JSON only, and never more than MAX_BODY_BYTES.

/**
 * The upload API reads JSON only. Browsers send text/plain, form and multipart bodies cross-site
 * without asking first (no CORS preflight), so accepting them lets any page make a visitor's
 * browser call the upload API with the visitor's cookies; JSON needs a preflight the upload API
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
    throw new RequestError(
      415,
      `Request body must be JSON sent with Content-Type: application/json, got ${describeValue(contentType ?? undefined)}`,
    )
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
