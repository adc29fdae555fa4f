// Raw requests to storage with the server's own credentials, signed with aws4fetch: the doctor needs to
// see statuses, error codes and CORS headers exactly as storage sends them.
import { AwsClient } from 'aws4fetch'
import { objectUrl } from '../protocol/object-url.ts'
import { xmlText } from '../protocol/xml.ts'
import type { ResolvedConfig } from '../server/config.ts'
import type { ResolvedCredentials } from '../server/credentials.ts'

export interface ProbeReply {
  status: number
  /** S3's `<Code>`, when the body holds one. */
  code?: string
  headers: Headers
  body: string
}

/** Each request gives up after this long: the doctor never hangs on a store that does not answer. */
const TIMEOUT_MS = 15_000

export interface StorageProbe {
  /** An object URL in the bucket; `key` defaults to a fresh probe key under `keyPrefix`. */
  url(key?: string, query?: string): string
  /** The bucket's own URL (for listing). */
  bucketUrl(query?: string): string
  signed(method: string, url: string, headers?: Record<string, string>): Promise<ProbeReply>
  /** `url` presigned for `method` (query-string SigV4, as the upload API's URLs are): what a page's preflight is sent to. */
  presign(method: string, url: string): Promise<string>
  /** Unsigned, as a browser sends a CORS preflight. */
  plain(method: string, url: string, headers?: Record<string, string>): Promise<ProbeReply>
}

export function storageProbe(config: ResolvedConfig, credentials: ResolvedCredentials): StorageProbe {
  const client = new AwsClient({
    accessKeyId: credentials.accessKeyId,
    secretAccessKey: credentials.secretAccessKey,
    ...(credentials.sessionToken ? { sessionToken: credentials.sessionToken } : {}),
    service: 's3',
    region: config.region,
  })
  const location = {
    bucket: config.bucket,
    region: config.region,
    endpoint: config.endpoint,
    forcePathStyle: config.forcePathStyle,
  }
  const probeKey = `${config.keyPrefix}updraft-doctor-${crypto.randomUUID()}`
  const read = async (response: Response): Promise<ProbeReply> => {
    const body = await response.text()
    const code = xmlText(body, 'Code')
    return { status: response.status, headers: response.headers, body, ...(code ? { code } : {}) }
  }
  return {
    url: (key = probeKey, query = '') => `${objectUrl({ ...location, key })}${query}`,
    bucketUrl: (query = '') => `${objectUrl({ ...location, key: 'x' }).replace(/\/x$/, '/')}${query}`,
    signed: async (method, url, headers = {}) =>
      read(
        await client.fetch(url, {
          method,
          headers: { 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD', ...headers },
          signal: AbortSignal.timeout(TIMEOUT_MS),
        }),
      ),
    presign: async (method, url) => (await client.sign(url, { method, aws: { signQuery: true } })).url,
    plain: async (method, url, headers = {}) =>
      read(await fetch(url, { method, headers, signal: AbortSignal.timeout(TIMEOUT_MS) })),
  }
}

/**
 * Whether storage takes this key's signatures at all: a signed GET of a missing object under
 * keyPrefix answers 404, or 403 AccessDenied to a key without s3:GetObject, but never a signature
 * or unknown-key error. What a later signature error on one call means depends on it.
 */
export async function keySigns(probe: StorageProbe): Promise<boolean> {
  const reply = await probe.signed('GET', probe.url()).catch(() => undefined)
  return !!reply && !BAD_KEY_CODES.includes(reply.code ?? '') && reply.status !== 400
}

/**
 * The store, not the key, when a call fails so: it answered NotImplemented or MethodNotAllowed, or
 * it refused this call's signature although it takes the same key's other signed requests.
 * s3rver 4 does the latter for every bucket-configuration call (lifecycle, CORS) an AWS SDK
 * signs. Says what happened in words, or undefined when the key may well be at fault.
 */
export function storeRefusal(error: Error, call: string, signs: boolean): string | undefined {
  const code = error.name
  if (UNSUPPORTED_CODES.includes(code)) return `this store does not support ${call} (it answered ${code})`
  if (signs && BAD_KEY_CODES.includes(code)) {
    return `this store answered ${call} with ${code}, though it accepts this key's signed requests on objects: the key is fine, the store most likely does not support the call`
  }
  return undefined
}

const BAD_KEY_CODES = ['SignatureDoesNotMatch', 'InvalidAccessKeyId']
const UNSUPPORTED_CODES = ['NotImplemented', 'MethodNotAllowed']
