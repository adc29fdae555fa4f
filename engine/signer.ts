import { AwsV4Signer } from 'aws4fetch'
import type { SignedRequest } from './send.ts'

export interface Credentials {
  accessKeyId: string
  secretAccessKey: string
  sessionToken?: string
}

export type Sign = (method: string, query?: string, headers?: Record<string, string>) => Promise<SignedRequest>

/**
 * SigV4 header signing for requests on one object URL. The body is never hashed
 * (UNSIGNED-PAYLOAD), so a part is signed without reading it.
 */
export function createSigner(credentials: Credentials, region: string, objectUrl: string): Sign {
  // aws4fetch caches the derived signing key here, saving four HMACs per request.
  const cache = new Map<string, ArrayBuffer>()
  return async (method, query = '', headers) => {
    const signed = await new AwsV4Signer({
      ...credentials,
      method,
      url: objectUrl + query,
      headers: { 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD', ...headers },
      service: 's3',
      region,
      cache,
    }).sign()
    return { method, url: signed.url.toString(), headers: Object.fromEntries(signed.headers) }
  }
}
