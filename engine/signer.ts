import { AwsV4Signer } from 'aws4fetch'
import { learnServerTime, serverNow } from './clock.ts'
import type { S3Error } from './errors.ts'
import type { SignedRequest } from './send.ts'

/** AWS-style credentials that sign requests to storage (SigV4). */
export interface Credentials {
  accessKeyId: string
  secretAccessKey: string
  /** Present for temporary (STS) credentials: sent as `x-amz-security-token`. */
  sessionToken?: string
}

/**
 * Credentials that can be renewed: asked before every request, with `refused` true after storage
 * refused the last ones (ExpiredToken, 403). Return fresh ones, or throw to give up.
 */
export type CredentialSource = (refused: boolean) => Credentials | Promise<Credentials>

export type Sign = (method: string, query?: string, headers?: Record<string, string>, refused?: S3Error) => Promise<SignedRequest>

/**
 * SigV4 header signing for requests on one object URL. The body is never hashed
 * (UNSIGNED-PAYLOAD), so a part is signed without reading it. Signed with the servers' time
 * (see clock.ts); a `RequestTimeTooSkewed` refusal teaches it, and the request is signed again.
 */
export function createSigner(credentials: Credentials | CredentialSource, region: string, objectUrl: string): Sign {
  // aws4fetch caches the derived signing key here, saving four HMACs per request.
  const cache = new Map<string, ArrayBuffer>()
  return async (method, query = '', headers, refused) => {
    const skewed = refused?.code === 'RequestTimeTooSkewed' && learnServerTime(refused.serverTime)
    const renewable = typeof credentials === 'function'
    if (refused && !skewed && !renewable) throw refused
    const signed = await new AwsV4Signer({
      ...(renewable ? await credentials(!!refused && !skewed) : credentials),
      method,
      url: objectUrl + query,
      headers: { 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD', ...headers },
      service: 's3',
      region,
      cache,
      datetime: new Date(serverNow()).toISOString().replace(/[:-]|\.\d{3}/g, ''),
    }).sign()
    return { method, url: signed.url.toString(), headers: Object.fromEntries(signed.headers) }
  }
}
