// What a bucket needs for uploads from a page, in one place: the CORS rule and the lifecycle rule
// `updraft-s3 setup-bucket` applies and `updraft-s3 doctor` checks, and how to set each on every store.
import type { LifecycleRule } from '@aws-sdk/client-s3'
import { knownStore } from '../server/info.ts'

/** Methods the engine sends from a page: PUT (objects, parts), POST (multipart start and complete), DELETE (abort). */
export const CORS_METHODS = ['PUT', 'POST', 'DELETE'] as const
/**
 * Request headers a page sends to storage: presigned mode those the upload API signs
 * (`content-type`, `cache-control`, `x-amz-acl` with `objectAcl`, `content-disposition` with
 * `contentDisposition`, and on stores other than AWS `x-amz-copy-source-range`, which keeps a URL
 * from becoming a copy: server/presigned-urls.ts `objectHeaders`); token mode signs its own
 * requests and adds the SigV4 headers. Listed, not `*`: R2 refuses `*` in AllowedHeaders.
 * Opt-ins add their own (SSE-C, tagging): see docs/opt-ins.md.
 */
export const PRESIGNED_HEADERS = [
  'content-type',
  'cache-control',
  'x-amz-acl',
  'content-disposition',
  'x-amz-copy-source-range',
]
export const TOKEN_HEADERS = ['authorization', 'x-amz-date', 'x-amz-content-sha256', 'x-amz-security-token']
export const CORS_HEADERS = [...PRESIGNED_HEADERS, ...TOKEN_HEADERS]
export const CORS_MAX_AGE_SECONDS = 3600
/** Days after which storage aborts a multipart upload that was neither completed nor aborted (a closed tab). */
export const ABORT_INCOMPLETE_AFTER_DAYS = 1
export const LIFECYCLE_RULE_ID = 'updraft-abort-incomplete-multipart-uploads'

/** The S3 API's shape (PutBucketCors), as the AWS CLI's `--cors-configuration` takes it. */
export const corsRule = (origins: string[]) => ({
  AllowedOrigins: origins,
  AllowedMethods: [...CORS_METHODS],
  AllowedHeaders: [...CORS_HEADERS],
  ExposeHeaders: ['ETag'],
  MaxAgeSeconds: CORS_MAX_AGE_SECONDS,
})

/**
 * The S3 API's shape (PutBucketLifecycleConfiguration), as the AWS CLI's `--lifecycle-configuration`
 * takes it, scoped to the upload API's `keyPrefix`: the bucket's other multipart uploads are not ours to abort.
 */
export const lifecycleRule = (keyPrefix: string) => ({
  ID: LIFECYCLE_RULE_ID,
  Status: 'Enabled' as const,
  Filter: { Prefix: keyPrefix },
  AbortIncompleteMultipartUpload: { DaysAfterInitiation: ABORT_INCOMPLETE_AFTER_DAYS },
})

export type Provider = 'aws' | 'r2' | 'b2' | 'minio' | 'ceph' | 'swift'
export const PROVIDERS: readonly Provider[] = ['aws', 'r2', 'b2', 'minio', 'ceph', 'swift']

const NAMES: Record<Provider, string> = {
  aws: 'AWS S3',
  r2: 'Cloudflare R2',
  b2: 'Backblaze B2',
  minio: 'MinIO',
  ceph: 'Ceph RGW',
  swift: 'OpenStack Swift',
}
export const providerName = (provider: Provider) => NAMES[provider]

/** The store behind a storage endpoint where its host tells; for any other (MinIO, Ceph RGW, …) fixes are shown for both. */
export const detectProvider = (endpoint: string | undefined): Provider | undefined => knownStore(endpoint)

/**
 * A lifecycle rule that aborts incomplete multipart uploads under `keyPrefix`: enabled, with
 * AbortIncompleteMultipartUpload, on a prefix the keys start with (a bucket-wide rule's is '').
 */
export const abortsIncompleteUploads = (rule: LifecycleRule, keyPrefix: string) =>
  rule.Status === 'Enabled' &&
  rule.AbortIncompleteMultipartUpload?.DaysAfterInitiation !== undefined &&
  keyPrefix.startsWith(rule.Filter?.Prefix ?? rule.Prefix ?? '')

const json = (value: unknown) => JSON.stringify(value, null, 2)
const endpointFlag = (endpoint: string | undefined) => (endpoint ? ` --endpoint-url ${endpoint}` : '')

export interface Target {
  bucket: string
  endpoint?: string
  origins: string[]
  /** The upload API's `keyPrefix`: the lifecycle rule covers these keys only. */
  keyPrefix: string
}

/** How to set the CORS rule on `provider`: a file and the command that applies it. */
export function corsFix(provider: Provider, { bucket, endpoint, origins }: Target): string {
  const rule = corsRule(origins)
  switch (provider) {
    case 'aws':
    case 'ceph':
      return `cors.json:\n${json({ CORSRules: [rule] })}\naws s3api put-bucket-cors --bucket ${bucket} --cors-configuration file://cors.json${endpointFlag(endpoint)}\n(or: npx updraft-s3 setup-bucket --origin ${origins[0]})`
    case 'r2':
      return (
        `cors.json:\n${json({ rules: [{ allowed: { origins, methods: rule.AllowedMethods, headers: rule.AllowedHeaders }, exposeHeaders: ['ETag'], maxAgeSeconds: CORS_MAX_AGE_SECONDS }] })}\n` +
        `npx wrangler r2 bucket cors set ${bucket} --file cors.json\n(or the S3 API: npx updraft-s3 setup-bucket --origin ${origins[0]})`
      )
    case 'b2':
      return (
        `The B2 web console's CORS presets do not cover the S3 API: set custom rules with the B2 CLI (or npx updraft-s3 setup-bucket, through the S3 API).\n` +
        `b2 bucket update --cors-rules '${JSON.stringify([
          {
            corsRuleName: 'updraft-s3',
            allowedOrigins: origins,
            allowedOperations: ['s3_put', 's3_post', 's3_delete', 's3_head'],
            allowedHeaders: rule.AllowedHeaders,
            exposeHeaders: ['ETag'],
            maxAgeSeconds: CORS_MAX_AGE_SECONDS,
          },
        ])}' ${bucket}`
      )
    case 'minio':
      return (
        `MinIO's community edition has no per-bucket CORS (PutBucketCors fails); it allows origins server-wide and exposes ETag by default:\n` +
        `MINIO_API_CORS_ALLOW_ORIGIN=${origins.join(',')}   (in MinIO's environment, then restart it)`
      )
    case 'swift':
      return `${SWIFT_CORS_PLACE}:\n${swiftCorsConfig(origins)}`
  }
}

/** Where OpenStack Swift keeps CORS for its S3 API (its PutBucketCors answers 501 NotImplemented). */
export const SWIFT_CORS_PLACE =
  "OpenStack Swift's S3 API has no per-bucket CORS (PutBucketCors answers 501 NotImplemented): set it in the proxy's proxy-server.conf, then restart swift-proxy-server. Its error replies carry no CORS headers whatever the config, so a page sees a refused request (an expired URL, a wrong signature) as a network error"

/** The proxy-server.conf lines Swift's S3 API needs for uploads from `origins` (ETag exposed). */
export const swiftCorsConfig = (origins: string[]) =>
  `[DEFAULT]\ncors_allow_origin = ${origins.join(' ')}\n# exposes ETag, which multipart uploads read\ncors_expose_headers = etag\n\n[filter:s3api]\ncors_preflight_allow_origin = ${origins.join(',')}`

/** How to add the lifecycle rule that aborts forgotten multipart uploads on `provider`. */
export function lifecycleFix(provider: Provider, { bucket, endpoint, keyPrefix }: Target): string {
  switch (provider) {
    case 'aws':
    case 'ceph':
      return (
        `lifecycle.json:\n${json({ Rules: [lifecycleRule(keyPrefix)] })}\n` +
        `aws s3api put-bucket-lifecycle-configuration --bucket ${bucket} --lifecycle-configuration file://lifecycle.json${endpointFlag(endpoint)}\n` +
        `(this replaces the bucket's rules: merge in any you have, or run npx updraft-s3 setup-bucket, which keeps them)`
      )
    case 'r2':
      return (
        `R2 gives new buckets a rule aborting incomplete multipart uploads after 7 days (dashboard: the bucket's Settings, Object lifecycle rules); if it was removed, R2 takes the S3 API's rule:\n` +
        `lifecycle.json:\n${json({ Rules: [lifecycleRule(keyPrefix)] })}\n` +
        `aws s3api put-bucket-lifecycle-configuration --bucket ${bucket} --lifecycle-configuration file://lifecycle.json${endpointFlag(endpoint)}`
      )
    case 'b2':
      return `b2 bucket update --lifecycle-rule '${JSON.stringify({ fileNamePrefix: keyPrefix, daysFromStartingToCancelingUnfinishedLargeFiles: ABORT_INCOMPLETE_AFTER_DAYS })}' ${bucket}`
    case 'minio':
      return `MinIO aborts stale multipart uploads by itself after MINIO_API_STALE_UPLOADS_EXPIRY (default 24h); set it in MinIO's environment to change that.`
    case 'swift':
      return `OpenStack Swift's S3 API has no lifecycle rules (it reads GET ?lifecycle as a bucket listing and refuses a rule as MalformedXML): abort forgotten uploads under ${keyPrefix} with the upload API's sweep (createUploadSweeper, or sweepEverySeconds; docs/operations.md) on a schedule.`
  }
}

/** The fix for each provider the storage endpoint may be: the detected one, or MinIO and Ceph when it cannot be told. */
export function fixesFor(endpoint: string | undefined, make: (provider: Provider) => string, only?: Provider): string {
  const providers = only
    ? [only]
    : [detectProvider(endpoint) ?? 'ceph', ...(detectProvider(endpoint) ? [] : (['minio'] as const))]
  return providers.map((provider) => `${providerName(provider)}:\n${make(provider)}`).join('\n\n')
}
