/**
 * S3's endpoint rules, the part an uploader needs, as one pure function: which host and path an
 * object lives at, and with which region and service its requests are signed. Follows the rule
 * set the AWS SDKs generate their resolvers from (virtual-hosted by default; path-style when asked
 * or when the bucket or endpoint cannot be a host name; dual-stack, FIPS and Transfer
 * Acceleration hosts; access-point and Outposts ARNs; directory buckets), with errors that say
 * which setting to change. Opt-in: pages that upload to one known store never need it.
 */
import { isDirectoryBucket } from './directory-session.ts'
import { encodeKey, type ObjectLocation } from './object-url.ts'

/** Which of S3's own hosts to use, and how to treat an ARN's region (all AWS only). */
export interface EndpointRules {
  /** FIPS 140 endpoints (`s3-fips.…`); AWS only. */
  useFipsEndpoint?: boolean
  /** IPv6-capable endpoints (`s3.dualstack.…`); AWS only. */
  useDualstackEndpoint?: boolean
  /** S3 Transfer Acceleration (`bucket.s3-accelerate.amazonaws.com`); AWS only, DNS-named buckets without dots. */
  useAccelerateEndpoint?: boolean
  /**
   * An ARN naming another region than `region`: sign for the ARN's region (true) or refuse
   * (false). @default true, as the SDK does when unset
   */
  useArnRegion?: boolean
}

/** Where an object's requests go and how they are signed. */
export interface ResolvedObject {
  /** The object's URL, key encoded, no query string. */
  url: string
  /** The region to sign with (an ARN's may differ from the configured one). */
  signingRegion: string
  /** `s3`; `s3-outposts` for Outposts access points; `s3express` for directory buckets. */
  signingService: 's3' | 's3-outposts' | 's3express'
}

/** A configuration S3's endpoint rules refuse; `message` names the setting to change. */
export class EndpointRuleError extends TypeError {
  override name = 'EndpointRuleError'
}

/**
 * @throws EndpointRuleError for combinations S3 refuses: acceleration with FIPS, path-style, a
 *   custom endpoint or a bucket name that is not a plain DNS label; FIPS or dual-stack with a
 *   custom endpoint; a malformed ARN; an ARN in another region when `useArnRegion` is false.
 */
export function resolveObjectUrl(location: ObjectLocation & EndpointRules): ResolvedObject {
  const { bucket, key, region } = location
  if (!region || !isDnsName(region)) {
    throw new EndpointRuleError(`updraft: region must be a region name such as 'us-east-1', got '${region}'`)
  }
  if (!key || /(^|\/)\.\.?(\/|$)/.test(key)) {
    // URL parsers resolve `.` and `..` segments, which would silently write another key.
    throw new EndpointRuleError(`updraft: key must be non-empty with no '.' or '..' segments, got '${key}'`)
  }
  const located = bucket.startsWith('arn:') ? accessPoint(location, parseArn(bucket)) : plainBucket(location)
  return { ...located, url: `${located.url}/${encodeKey(key)}` }
}

type Located = ResolvedObject

/** A bucket by name: on AWS (regional, FIPS, dual-stack, accelerate) or on a custom endpoint. */
function plainBucket(location: ObjectLocation & EndpointRules): Located {
  const {
    bucket,
    region,
    endpoint,
    forcePathStyle,
    useFipsEndpoint: fips,
    useDualstackEndpoint: dualstack,
    useAccelerateEndpoint: accelerate,
  } = location
  if (!bucket || bucket.includes('/')) {
    throw new EndpointRuleError(
      `updraft: bucket must be a bucket name (a '/' is allowed only in an ARN), got '${bucket}'`,
    )
  }
  if (endpoint !== undefined) {
    if (fips || dualstack || accelerate) {
      const named = [
        fips && 'useFipsEndpoint',
        dualstack && 'useDualstackEndpoint',
        accelerate && 'useAccelerateEndpoint',
      ].filter(Boolean)
      throw new EndpointRuleError(
        `updraft: ${named.join(' and ')} select AWS's own hosts and cannot be combined with a custom endpoint (${endpoint}); drop one`,
      )
    }
    const base = parseEndpoint(endpoint)
    // An IP address has no subdomains; a name that is not a host label cannot be one.
    const pathStyle =
      forcePathStyle || isIpAddress(base.hostname) || !isVirtualHostable(bucket, base.protocol === 'http:')
    // A directory bucket behind a custom endpoint (a VPC endpoint, a test stand-in) still signs as s3express.
    return {
      url: join(base, bucket, pathStyle),
      signingRegion: region,
      signingService: isDirectoryBucket(bucket) ? 's3express' : 's3',
    }
  }

  const suffix = dnsSuffix(region)
  if (isDirectoryBucket(bucket)) return directoryBucket(location, suffix)
  if (accelerate) {
    if (fips)
      throw new EndpointRuleError(
        'updraft: S3 Transfer Acceleration has no FIPS endpoint: turn off useAccelerateEndpoint or useFipsEndpoint',
      )
    if (forcePathStyle)
      throw new EndpointRuleError(
        'updraft: S3 Transfer Acceleration needs virtual-hosted URLs: turn off forcePathStyle or useAccelerateEndpoint',
      )
    if (!isVirtualHostable(bucket, false)) {
      throw new EndpointRuleError(
        `updraft: S3 Transfer Acceleration needs a bucket name that is a DNS label without dots, got '${bucket}'`,
      )
    }
    if (suffix !== 'amazonaws.com')
      throw new EndpointRuleError(`updraft: S3 Transfer Acceleration is not offered in ${region}`)
    const host = `s3-accelerate${dualstack ? '.dualstack' : ''}.amazonaws.com`
    return { url: `https://${bucket}.${host}`, signingRegion: region, signingService: 's3' }
  }
  if (fips && suffix === 'amazonaws.com.cn')
    throw new EndpointRuleError(`updraft: there are no FIPS endpoints in ${region}: turn off useFipsEndpoint`)
  const base = new URL(`https://s3${fips ? '-fips' : ''}${dualstack ? '.dualstack' : ''}.${region}.${suffix}`)
  // Dots in a virtual host break the *.s3… TLS certificate, so dotted buckets go path-style.
  const pathStyle = forcePathStyle || !isVirtualHostable(bucket, false)
  return { url: join(base, bucket, pathStyle), signingRegion: region, signingService: 's3' }
}

/** `name--azid--x-s3`: S3 Express One Zone, served from its zone's own host and signed as `s3express`. */
function directoryBucket(location: ObjectLocation & EndpointRules, suffix: string): Located {
  const { bucket, region, forcePathStyle, useDualstackEndpoint, useAccelerateEndpoint, useFipsEndpoint } = location
  if (forcePathStyle || useDualstackEndpoint || useAccelerateEndpoint) {
    throw new EndpointRuleError(
      'updraft: directory buckets (--x-s3) take virtual-hosted zonal URLs only: turn off forcePathStyle, useDualstackEndpoint and useAccelerateEndpoint',
    )
  }
  const zone = /--([a-z0-9-]+?)--x-s3$/.exec(bucket)?.[1]
  if (!zone || !isDnsName(zone))
    throw new EndpointRuleError(`updraft: a directory bucket is named 'name--zoneid--x-s3', got '${bucket}'`)
  const host = `s3express${useFipsEndpoint ? '-fips' : ''}-${zone}.${region}.${suffix}`
  return { url: `https://${bucket}.${host}`, signingRegion: region, signingService: 's3express' }
}

interface Arn {
  partition: string
  service: string
  region: string
  account: string
  resource: string[]
}

/** `arn:partition:service:region:account:resource`, the resource split on `:` and `/`. */
function parseArn(bucket: string): Arn {
  const [, partition, service, region, account, ...rest] = bucket.split(':')
  const resource = rest.join(':').split(/[:/]/)
  if (!partition || !service || region === undefined || !account || rest.length === 0 || resource[0] === '') {
    throw new EndpointRuleError(
      `updraft: '${bucket}' is not a valid ARN (arn:partition:service:region:account:accesspoint/name)`,
    )
  }
  return { partition, service, region, account, resource }
}

/** Access points (`s3`) and Outposts access points (`s3-outposts`), by ARN. */
function accessPoint(location: ObjectLocation & EndpointRules, arn: Arn): Located {
  const { bucket, region, endpoint, forcePathStyle, useFipsEndpoint: fips, useDualstackEndpoint: dualstack } = location
  if (forcePathStyle)
    throw new EndpointRuleError('updraft: an ARN bucket takes virtual-hosted URLs only: turn off forcePathStyle')
  if (location.useAccelerateEndpoint)
    throw new EndpointRuleError(
      'updraft: access points do not support S3 Transfer Acceleration: turn off useAccelerateEndpoint',
    )
  if (arn.service !== 's3' && arn.service !== 's3-outposts') {
    throw new EndpointRuleError(`updraft: the ARN '${bucket}' is for service '${arn.service}', not s3 or s3-outposts`)
  }
  if (arn.region === '') {
    throw new EndpointRuleError(
      'updraft: Multi-Region Access Points need SigV4A signing, which Updraft does not do: use a regional access point',
    )
  }
  if (!isDnsName(arn.region)) throw new EndpointRuleError(`updraft: the region in ARN '${bucket}' is not a region name`)
  if (!/^[a-zA-Z0-9-]{1,63}$/.test(arn.account))
    throw new EndpointRuleError(`updraft: the account id in ARN '${bucket}' may hold only a-z, A-Z, 0-9 and '-'`)
  if (arn.region !== region && location.useArnRegion === false) {
    throw new EndpointRuleError(
      `updraft: the ARN's region ${arn.region} differs from the configured region ${region}; set useArnRegion or use the ARN's region`,
    )
  }
  const custom = endpoint === undefined ? undefined : parseEndpoint(endpoint)
  if (custom && dualstack)
    throw new EndpointRuleError(
      'updraft: useDualstackEndpoint cannot be combined with a custom endpoint (PrivateLink): drop one',
    )
  const suffix = dnsSuffix(arn.region)

  if (arn.service === 's3-outposts') {
    const [kind, outpost, apKind, name, ...extra] = arn.resource
    if (kind !== 'outpost' || !outpost || apKind !== 'accesspoint' || !name || extra.length > 0) {
      throw new EndpointRuleError(
        `updraft: an Outposts ARN ends 'outpost/{outpost-id}/accesspoint/{name}', got '${bucket}'`,
      )
    }
    if (fips || dualstack)
      throw new EndpointRuleError('updraft: S3 on Outposts has no FIPS or dual-stack endpoints: turn them off')
    checkLabel(name, 'access point name', bucket)
    checkLabel(outpost, 'outpost id', bucket)
    const host = custom ? custom.host : `s3-outposts.${arn.region}.${suffix}`
    return {
      url: `${custom?.protocol ?? 'https:'}//${name}-${arn.account}.${outpost}.${host}`,
      signingRegion: arn.region,
      signingService: 's3-outposts',
    }
  }

  const [kind, name, ...extra] = arn.resource
  if (kind !== 'accesspoint' || !name || extra.length > 0) {
    throw new EndpointRuleError(
      `updraft: an access point ARN ends 'accesspoint/{name}' with nothing after it, got '${bucket}'`,
    )
  }
  checkLabel(name, 'access point name', bucket)
  if (fips && suffix === 'amazonaws.com.cn')
    throw new EndpointRuleError(`updraft: there are no FIPS endpoints in ${arn.region}: turn off useFipsEndpoint`)
  const host = custom
    ? custom.host
    : `s3-accesspoint${fips ? '-fips' : ''}${dualstack ? '.dualstack' : ''}.${arn.region}.${suffix}`
  return {
    url: `${custom?.protocol ?? 'https:'}//${name}-${arn.account}.${host}`,
    signingRegion: arn.region,
    signingService: 's3',
  }
}

function parseEndpoint(endpoint: string): URL {
  let url: URL
  try {
    url = new URL(endpoint)
  } catch {
    throw new EndpointRuleError(
      `updraft: endpoint must be an http(s) URL such as 'https://s3.example.com', got '${endpoint}'`,
    )
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.search || url.hash) {
    throw new EndpointRuleError(`updraft: endpoint must be an http(s) URL with no query or fragment, got '${endpoint}'`)
  }
  return url
}

/** `{endpoint}/{bucket}` or `{bucket}.{host}{path}`, keeping a path the endpoint carries. */
function join(base: URL, bucket: string, pathStyle: boolean): string {
  const path = base.pathname.replace(/\/$/, '')
  return pathStyle ? `${base.origin}${path}/${bucket}` : `${base.protocol}//${bucket}.${base.host}${path}`
}

/**
 * A bucket name that can be the first label(s) of a host name: 3-63 characters of a-z, 0-9 and
 * `-`, not shaped like an IP address. Dots make several labels; they are allowed only over plain
 * HTTP, where no wildcard certificate has to match.
 */
export function isVirtualHostable(bucket: string, allowDots: boolean): boolean {
  if (bucket.length < 3 || bucket.length > 63 || isIpAddress(bucket)) return false
  const labels = bucket.split('.')
  if (labels.length > 1 && !allowDots) return false
  return labels.every((label) => /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/.test(label))
}

const isIpAddress = (host: string) => /^\d{1,3}(\.\d{1,3}){3}$/.test(host) || host.startsWith('[')

const isDnsName = (name: string) => /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/i.test(name)

/** The AWS partitions an upload can reach: China's regions have their own domain. */
const dnsSuffix = (region: string) => (region.startsWith('cn-') ? 'amazonaws.com.cn' : 'amazonaws.com')

function checkLabel(value: string, what: string, bucket: string) {
  if (!/^[a-zA-Z0-9-]{1,63}$/.test(value))
    throw new EndpointRuleError(
      `updraft: the ${what} in ARN '${bucket}' may hold only a-z, A-Z, 0-9 and '-', got '${value}'`,
    )
}
