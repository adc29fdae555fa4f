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
 * SigV4 header signing through aws4fetch's `AwsV4Signer`, the design's signer, configured through
 * its own options only. What the engine adds around it: the servers' time (`datetime`) and a key
 * cache per object signer. aws4fetch signs an `s3` path as sent; for any other service it encodes
 * the path again, unless `singleEncode`, and joins slash runs. S3 Express (`s3express`) wants the
 * path as sent, so it gets `singleEncode`, and a slash run in its key is written `/%2F…`, which S3
 * reads as the same key and aws4fetch leaves as it is. A header value HTTP cannot carry throws a
 * TypeError here, before any attempt (fetch would reject it as if the network failed, and it would
 * be retried).
 */
export async function signV4({
  url,
  service,
  ...request
}: SigV4Request): Promise<{ url: string; headers: Record<string, string> }> {
  const s3 = service === 's3'
  const sent = s3 ? url : slashRunsEscaped(url)
  const signed = await new AwsV4Signer({ ...request, url: sent, service, singleEncode: !s3 }).sign()
  return { url: signed.url.href, headers: Object.fromEntries(signed.headers) }
}

/** `/a//b` → `/a/%2Fb` in the path: the same key to S3, and no slash run for aws4fetch to join. */
function slashRunsEscaped(url: string): string {
  const { origin, pathname, search } = new URL(url)
  return origin + pathname.replace(/\/{2,}/g, (run) => `/${'%2F'.repeat(run.length - 1)}`) + search
}
