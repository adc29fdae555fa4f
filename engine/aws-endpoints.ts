import { EndpointRuleError, resolveObjectUrl, type EndpointRules } from '../protocol/endpoint-rules.ts'
import type { S3Error } from './errors.ts'
import type { ObjectExtras } from './upload-object.ts'

export { EndpointRuleError, type EndpointRules } from '../protocol/endpoint-rules.ts'

/**
 * S3's endpoint rules, an opt-in of `uploadObject` and of token-mode `upload`: FIPS, dual-stack
 * and Transfer Acceleration hosts, access-point and Outposts ARNs as the bucket, and a bucket
 * followed to its region — on a 301 PermanentRedirect or a 400 naming the region, the request is
 * signed again for that region, and the rest of the upload goes there too. Off the base bundle:
 * pages that upload to one known store never need it.
 *
 * @example
 * ```ts
 * import { upload, uploadObject } from 'updraft'
 * import { awsEndpoints } from 'updraft/aws-endpoints'
 *
 * await uploadObject(file, { ...target, ...awsEndpoints({ useDualstackEndpoint: true }) })
 * await upload(file, { ...awsEndpoints() }) // token mode: follow the bucket to its region
 * ```
 * @throws EndpointRuleError (when the upload starts) for combinations S3 refuses, naming the
 *   setting to change; and for directory buckets (`--x-s3`), whose CreateSession sessions this
 *   engine does not make.
 */
export function awsEndpoints(rules: EndpointRules = {}): ObjectExtras {
  return {
    locate(location, refused) {
      // Parts in flight together are all refused: each moves to the region named, the first included.
      const region = refused ? bucketRegion(refused) : location.region
      if (!region || (refused && region === location.region)) return undefined
      const resolved = resolveObjectUrl({ ...location, region, ...rules })
      if (resolved.signingService === 's3express') {
        throw new EndpointRuleError(
          `updraft: '${location.bucket}' is a directory bucket (S3 Express One Zone), which needs CreateSession credentials this engine does not make: upload to a general purpose bucket`,
        )
      }
      return resolved
    },
  }
}

/**
 * The region a refusal names: `x-amz-bucket-region` (301 PermanentRedirect, 400), else the 400
 * AuthorizationHeaderMalformed body's `<Region>` — what a page sees when the bucket's CORS rules
 * do not expose that header.
 */
function bucketRegion({ status, response }: S3Error): string | undefined {
  if (status !== 301 && status !== 400) return undefined
  return response?.header('x-amz-bucket-region') ?? /<Region>([a-z0-9-]+)<\/Region>/.exec(response?.body ?? '')?.[1]
}
