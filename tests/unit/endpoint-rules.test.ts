// S3's endpoint rules (protocol/endpoint-rules.ts), table-tested. The expected URLs and refusals
// follow the test cases of the rule set the AWS SDKs generate their resolvers from.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  EndpointRuleError,
  type EndpointRules,
  isVirtualHostable,
  resolveObjectUrl,
} from '../../protocol/endpoint-rules.ts'
import { type ObjectLocation, objectUrl } from '../../protocol/object-url.ts'

type Case = [
  what: string,
  location: Partial<ObjectLocation> & EndpointRules,
  url: string,
  signing?: [region: string, service: string],
]

const ap = 'arn:aws:s3:us-west-2:123456789012:accesspoint:myendpoint'
const outpost = 'arn:aws:s3-outposts:us-west-2:123456789012:outpost/op-01234567890123456/accesspoint/reports'

const resolved: Case[] = [
  [
    'virtual-hosted by default',
    { bucket: 'bucketname', region: 'us-west-2' },
    'https://bucketname.s3.us-west-2.amazonaws.com/k',
  ],
  [
    'path-style when asked',
    { bucket: 'bucketname', region: 'us-west-2', forcePathStyle: true },
    'https://s3.us-west-2.amazonaws.com/bucketname/k',
  ],
  [
    'a dotted bucket goes path-style over TLS',
    { bucket: 'bucket.name', region: 'us-east-1' },
    'https://s3.us-east-1.amazonaws.com/bucket.name/k',
  ],
  [
    'a bucket that is no DNS label goes path-style',
    { bucket: '99_ab', region: 'us-west-2', useDualstackEndpoint: true },
    'https://s3.dualstack.us-west-2.amazonaws.com/99_ab/k',
  ],
  [
    'dual-stack, path-style forced',
    { bucket: 'bucketname', region: 'us-west-2', useDualstackEndpoint: true, forcePathStyle: true },
    'https://s3.dualstack.us-west-2.amazonaws.com/bucketname/k',
  ],
  [
    'FIPS',
    { bucket: 'bucketname', region: 'us-east-1', useFipsEndpoint: true },
    'https://bucketname.s3-fips.us-east-1.amazonaws.com/k',
  ],
  [
    'FIPS and dual-stack',
    { bucket: 'bucketname', region: 'us-east-1', useFipsEndpoint: true, useDualstackEndpoint: true },
    'https://bucketname.s3-fips.dualstack.us-east-1.amazonaws.com/k',
  ],
  [
    'Transfer Acceleration',
    { bucket: 'bucketname', region: 'us-west-2', useAccelerateEndpoint: true },
    'https://bucketname.s3-accelerate.amazonaws.com/k',
    ['us-west-2', 's3'],
  ],
  [
    'Transfer Acceleration, dual-stack',
    { bucket: 'bucketname', region: 'us-west-2', useAccelerateEndpoint: true, useDualstackEndpoint: true },
    'https://bucketname.s3-accelerate.dualstack.amazonaws.com/k',
  ],
  [
    'China has its own domain',
    { bucket: 'bucketname', region: 'cn-north-1' },
    'https://bucketname.s3.cn-north-1.amazonaws.com.cn/k',
  ],
  [
    'an IPv4 endpoint forces path-style',
    { bucket: 'bucketname', region: 'af-south-1', endpoint: 'https://123.123.0.1' },
    'https://123.123.0.1/bucketname/k',
  ],
  [
    'a loopback store (MinIO, RGW) without forcePathStyle',
    { bucket: 'uploads', region: 'us-east-1', endpoint: 'http://127.0.0.1:9000' },
    'http://127.0.0.1:9000/uploads/k',
  ],
  [
    'an IPv6 endpoint forces path-style',
    { bucket: 'uploads', region: 'us-east-1', endpoint: 'http://[::1]:9000' },
    'http://[::1]:9000/uploads/k',
  ],
  [
    'a named custom endpoint keeps its scheme and path, virtual-hosted',
    {
      bucket: 'bucketname',
      region: 'af-south-1',
      endpoint: 'http://control.vpce-1a2b3c4d-5e6f.s3.us-west-2.vpce.amazonaws.com/foo',
    },
    'http://bucketname.control.vpce-1a2b3c4d-5e6f.s3.us-west-2.vpce.amazonaws.com/foo/k',
  ],
  [
    'a custom endpoint and a bucket that is no DNS label',
    {
      bucket: '99_ab',
      region: 'af-south-1',
      endpoint: 'https://control.vpce-1a2b3c4d-5e6f.s3.us-west-2.vpce.amazonaws.com',
    },
    'https://control.vpce-1a2b3c4d-5e6f.s3.us-west-2.vpce.amazonaws.com/99_ab/k',
  ],
  [
    'R2, path-style',
    {
      bucket: 'uploads',
      region: 'auto',
      endpoint: 'https://account-id.r2.cloudflarestorage.com',
      forcePathStyle: true,
    },
    'https://account-id.r2.cloudflarestorage.com/uploads/k',
  ],
  [
    'an access point ARN signs for its own region',
    { bucket: ap, region: 'us-east-1' },
    'https://myendpoint-123456789012.s3-accesspoint.us-west-2.amazonaws.com/k',
    ['us-west-2', 's3'],
  ],
  [
    'an access point ARN with FIPS and dual-stack',
    { bucket: ap, region: 'us-east-1', useFipsEndpoint: true, useDualstackEndpoint: true },
    'https://myendpoint-123456789012.s3-accesspoint-fips.dualstack.us-west-2.amazonaws.com/k',
  ],
  [
    'an access point ARN in slash form',
    { bucket: 'arn:aws:s3:us-west-2:123456789012:accesspoint/myendpoint', region: 'us-west-2' },
    'https://myendpoint-123456789012.s3-accesspoint.us-west-2.amazonaws.com/k',
  ],
  [
    'an access point behind PrivateLink',
    { bucket: ap, region: 'us-west-2', endpoint: 'https://beta.example.com' },
    'https://myendpoint-123456789012.beta.example.com/k',
  ],
  [
    'an Outposts access point',
    { bucket: outpost, region: 'us-west-2' },
    'https://reports-123456789012.op-01234567890123456.s3-outposts.us-west-2.amazonaws.com/k',
    ['us-west-2', 's3-outposts'],
  ],
  [
    'an Outposts ARN in another region',
    { bucket: outpost.replace('us-west-2', 'us-east-1'), region: 'us-west-2' },
    'https://reports-123456789012.op-01234567890123456.s3-outposts.us-east-1.amazonaws.com/k',
    ['us-east-1', 's3-outposts'],
  ],
  [
    'a directory bucket',
    { bucket: 'mybucket--usw2-az1--x-s3', region: 'us-west-2' },
    'https://mybucket--usw2-az1--x-s3.s3express-usw2-az1.us-west-2.amazonaws.com/k',
    ['us-west-2', 's3express'],
  ],
  [
    'a directory bucket behind a custom endpoint still signs as s3express',
    { bucket: 'mybucket--usw2-az1--x-s3', region: 'us-west-2', endpoint: 'http://127.0.0.1:9000' },
    'http://127.0.0.1:9000/mybucket--usw2-az1--x-s3/k',
    ['us-west-2', 's3express'],
  ],
]

const refused: Array<[what: string, location: Partial<ObjectLocation> & EndpointRules, message: RegExp]> = [
  ['a region that is no DNS name', { bucket: 'b-1', region: 'a b' }, /region must be a region name/],
  [
    'acceleration with FIPS',
    { bucket: 'bucketname', region: 'us-west-2', useAccelerateEndpoint: true, useFipsEndpoint: true },
    /Acceleration has no FIPS endpoint/,
  ],
  [
    'acceleration with path-style',
    { bucket: 'bucketname', region: 'us-west-2', useAccelerateEndpoint: true, forcePathStyle: true },
    /turn off forcePathStyle or useAccelerateEndpoint/,
  ],
  [
    'acceleration with a dotted bucket',
    { bucket: 'bucket.name', region: 'us-west-2', useAccelerateEndpoint: true },
    /DNS label without dots/,
  ],
  [
    'acceleration in China',
    { bucket: 'bucketname', region: 'cn-north-1', useAccelerateEndpoint: true },
    /not offered in cn-north-1/,
  ],
  [
    'acceleration with a custom endpoint',
    { bucket: 'bucketname', region: 'us-west-2', useAccelerateEndpoint: true, endpoint: 'https://abc.com' },
    /useAccelerateEndpoint select AWS's own hosts/,
  ],
  [
    'FIPS with a custom endpoint',
    { bucket: 'bucketname', region: 'us-west-2', useFipsEndpoint: true, endpoint: 'https://abc.com' },
    /useFipsEndpoint select AWS's own hosts and cannot be combined with a custom endpoint/,
  ],
  [
    'dual-stack with a custom endpoint',
    { bucket: '99_ab', region: 'us-west-2', useDualstackEndpoint: true, endpoint: 'http://abc.com' },
    /useDualstackEndpoint select AWS's own hosts/,
  ],
  [
    'FIPS in China',
    { bucket: 'bucketname', region: 'cn-north-1', useFipsEndpoint: true },
    /no FIPS endpoints in cn-north-1/,
  ],
  [
    'a custom endpoint that is no URL',
    { bucket: 'bucketname', region: 'af-south-1', endpoint: 'abcde://nota#url' },
    /endpoint must be an http\(s\) URL/,
  ],
  [
    'an ARN for another service',
    { bucket: 'arn:aws:not-s3:us-west-2:123456789012:accesspoint:myendpoint', region: 'us-east-1' },
    /for service 'not-s3'/,
  ],
  [
    'an ARN with more after the access point name',
    { bucket: `${ap}:more-data`, region: 'us-east-1' },
    /with nothing after it/,
  ],
  [
    'an ARN with no access point name',
    { bucket: 'arn:aws:s3:us-west-2:123456789012:accesspoint:', region: 'us-east-1' },
    /ends 'accesspoint\/\{name\}'/,
  ],
  [
    'an ARN with no resource',
    { bucket: 'arn:aws:s3:us-west-2:123456789012:', region: 'us-east-1' },
    /is not a valid ARN/,
  ],
  [
    'an ARN whose account id has a _',
    { bucket: 'arn:aws:s3:us-west-2:123456_789012:accesspoint:apname', region: 'us-east-1' },
    /account id .* may hold only/,
  ],
  [
    'an access point name with a _',
    { bucket: 'arn:aws:s3:us-west-2:123456789012:accesspoint:ap_name', region: 'us-east-1' },
    /access point name .* may hold only/,
  ],
  [
    'an ARN in another region with useArnRegion false',
    { bucket: ap.replace('us-west-2', 'us-east-1'), region: 'us-west-2', useArnRegion: false },
    /region us-east-1 differs from the configured region us-west-2/,
  ],
  [
    'an ARN with path-style',
    { bucket: ap, region: 'us-west-2', forcePathStyle: true },
    /ARN bucket takes virtual-hosted URLs only/,
  ],
  [
    'an ARN with acceleration',
    { bucket: ap, region: 'us-west-2', useAccelerateEndpoint: true },
    /do not support S3 Transfer Acceleration/,
  ],
  [
    'a Multi-Region Access Point (SigV4A)',
    { bucket: 'arn:aws:s3::123456789012:accesspoint:mfzwi23gnjvgw.mrap', region: 'us-east-1' },
    /Multi-Region Access Points need SigV4A/,
  ],
  [
    'an access point with dual-stack behind PrivateLink',
    { bucket: ap, region: 'us-west-2', useDualstackEndpoint: true, endpoint: 'https://beta.example.com' },
    /useDualstackEndpoint cannot be combined with a custom endpoint/,
  ],
  [
    'Outposts with dual-stack',
    { bucket: outpost, region: 'us-west-2', useDualstackEndpoint: true },
    /Outposts has no FIPS or dual-stack/,
  ],
  [
    'Outposts with FIPS',
    { bucket: outpost, region: 'us-west-2', useFipsEndpoint: true },
    /Outposts has no FIPS or dual-stack/,
  ],
  [
    'a malformed Outposts ARN',
    { bucket: 'arn:aws:s3-outposts:us-west-2:123456789012:outpost/op-01234567890123456/reports', region: 'us-west-2' },
    /Outposts ARN ends/,
  ],
  [
    'a directory bucket path-style',
    { bucket: 'mybucket--usw2-az1--x-s3', region: 'us-west-2', forcePathStyle: true },
    /directory buckets .* virtual-hosted zonal URLs only/,
  ],
  ['a bucket with / that is no ARN', { bucket: 'a/b', region: 'us-west-2' }, /'\/' is allowed only in an ARN/],
  [
    'a key with a .. segment',
    { bucket: 'bucketname', region: 'us-west-2', key: 'a/../b' },
    /no '\.' or '\.\.' segments/,
  ],
]

describe('resolveObjectUrl', () => {
  it.each(resolved)('%s', (_what, location, url, signing) => {
    const result = resolveObjectUrl({ key: 'k', ...location } as ObjectLocation)
    expect(result.url).toBe(url)
    if (signing) expect([result.signingRegion, result.signingService]).toEqual(signing)
  })

  it.each(refused)('refuses %s, saying what to change', (_what, location, message) => {
    const resolve = () => resolveObjectUrl({ key: 'k', ...location } as ObjectLocation)
    expect(resolve).toThrow(EndpointRuleError)
    expect(resolve).toThrow(message)
  })

  it('encodes keys as SigV4 wants them: spaces, +, unicode, ?, #, % and reserved marks', () => {
    const { url } = resolveObjectUrl({ bucket: 'b-1', region: 'us-east-1', key: "dir/a b+c ü?#%!'()*.txt" })
    expect(url).toBe('https://b-1.s3.us-east-1.amazonaws.com/dir/a%20b%2Bc%20%C3%BC%3F%23%25%21%27%28%29%2A.txt')
    expect(decodeURIComponent(new URL(url).pathname.slice(1))).toBe("dir/a b+c ü?#%!'()*.txt")
  })

  it('agrees with the base objectUrl wherever no rule beyond it applies', () => {
    const label = fc.stringMatching(/^[a-z0-9]([a-z0-9-]{1,20}[a-z0-9])$/)
    fc.assert(
      fc.property(
        label,
        fc.constantFrom('us-east-1', 'eu-west-1', 'ap-south-1'),
        fc.string({ minLength: 1, maxLength: 40 }).filter((key) => !/(^|\/)\.\.?(\/|$)/.test(key)),
        fc.boolean(),
        fc.constantFrom(undefined, 'https://s3.example.com', 'http://127.0.0.1:9000', 'https://store.example.com/base'),
        (bucket, region, key, forcePathStyle, endpoint) => {
          const location = { bucket, region, key, forcePathStyle, endpoint }
          expect(resolveObjectUrl(location).url).toBe(objectUrl(location))
        },
      ),
    )
  })
})

describe('isVirtualHostable', () => {
  it.each([
    ['bucketname', false, true],
    ['bu', false, false],
    ['a'.repeat(64), false, false],
    ['Bucket', false, false],
    ['bucket_name', false, false],
    ['-bucket', false, false],
    ['bucket.name', false, false],
    ['bucket.name', true, true],
    ['bucket..name', true, false],
    ['192.168.1.1', true, false],
  ] as const)('%s (dots allowed: %s) → %s', (bucket, allowDots, expected) => {
    expect(isVirtualHostable(bucket, allowDots)).toBe(expected)
  })
})
