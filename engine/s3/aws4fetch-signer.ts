import { AwsV4Signer } from 'aws4fetch'

/**
 * A request to sign for S3 with SigV4 in the Authorization header. The body is not hashed:
 * `headers['x-amz-content-sha256']` names the payload (UNSIGNED-PAYLOAD in the engine).
 */
export interface SigV4Request {
  method: string
  /** The object's URL (protocol/object-url.ts, or `resolveEndpoint`'s) plus its query string. */
  url: string
  headers: Record<string, string>
  accessKeyId: string
  secretAccessKey: string
  /** Temporary credentials' token, sent and signed as `x-amz-security-token`. */
  sessionToken?: string
  /** `s3`, or `s3express` for a directory bucket. */
  service: string
  region: string
  /** `YYYYMMDDTHHMMSSZ`: the servers' time (clock.ts), not this machine's. */
  datetime: string
  /** aws4fetch's derived signing keys, one per secret, day, region and service: four HMACs saved per request. */
  cache: Map<string, ArrayBuffer>
}

/**
 * SigV4 header signing through aws4fetch's `AwsV4Signer`, the design's signer. What the engine
 * adds around it: the servers' time (`datetime`), a key cache per object signer, and S3 Express.
 * aws4fetch applies S3's path rule (the path signed as sent: encoded once, slash runs kept) only
 * to the service `s3`, and encodes any other service's path twice; S3 Express wants S3's rule. So
 * every request is set up as `s3`, then scoped to its own service before it is signed — the
 * scope is all that differs. A header value HTTP cannot carry throws a TypeError here, before any
 * attempt (fetch would reject it as if the network failed, and it would be retried).
 */
export async function signV4({ service, ...request }: SigV4Request): Promise<{ url: string; headers: Record<string, string> }> {
  const signer = new AwsV4Signer({ ...request, service: 's3' })
  if (service !== 's3') {
    signer.service = service
    signer.credentialString = `${request.datetime.slice(0, 8)}/${request.region}/${service}/aws4_request`
  }
  const { url, headers } = await signer.sign()
  return { url: url.href, headers: Object.fromEntries(headers) }
}
