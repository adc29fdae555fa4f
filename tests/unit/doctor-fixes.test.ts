// What `updraft-s3 doctor` tells a user to run, per store (cli/bucket-rules.ts), and the rules
// setup-bucket accepts as already sufficient (cli/setup-bucket.ts).
import { describe, expect, it } from 'vitest'
import {
  corsFix,
  corsRule,
  detectProvider,
  fixesFor,
  lifecycleFix,
  lifecycleRule,
  PROVIDERS,
} from '../../cli/bucket-rules.ts'
import { corsVerdict, storeFromReply } from '../../cli/doctor.ts'
import { corsRuleAllows } from '../../cli/setup-bucket.ts'

const target = {
  bucket: 'uploads',
  endpoint: 'https://s3.example.test',
  origins: ['https://app.example.test'],
  keyPrefix: 'next-s3-uploads/',
}

describe('fixes per store', () => {
  it('tells AWS, R2, B2 and Ceph apart by endpoint; a custom endpoint could be MinIO or Ceph', () => {
    expect(detectProvider(undefined)).toBe('aws')
    expect(detectProvider('https://s3.eu-west-1.amazonaws.com')).toBe('aws')
    // China's partition: the page's store line said AWS, the doctor showed Ceph and MinIO fixes.
    expect(detectProvider('https://s3.cn-north-1.amazonaws.com.cn')).toBe('aws')
    expect(detectProvider('https://0123abc.r2.cloudflarestorage.com')).toBe('r2')
    expect(detectProvider('https://s3.us-west-004.backblazeb2.com')).toBe('b2')
    expect(detectProvider('http://127.0.0.1:9000')).toBeUndefined()
    const both = fixesFor('http://127.0.0.1:9000', (provider) => corsFix(provider, target))
    expect(both).toContain('Ceph RGW:')
    expect(both).toContain('MinIO:')
  })

  it('gives a CORS fix for every store, each allowing the origin, PUT/POST/DELETE and exposing ETag in its own syntax', () => {
    for (const provider of PROVIDERS) {
      const fix = corsFix(provider, target)
      expect(fix, provider).toContain('https://app.example.test')
      if (provider !== 'minio') expect(fix, provider).toMatch(/ETag/)
    }
    expect(corsFix('aws', { ...target, endpoint: undefined })).toMatch(
      /aws s3api put-bucket-cors --bucket uploads --cors-configuration file:\/\/cors.json\n/,
    )
    expect(corsFix('ceph', target)).toContain('--endpoint-url https://s3.example.test')
    expect(corsFix('r2', target)).toContain('npx wrangler r2 bucket cors set uploads --file cors.json')
    expect(corsFix('b2', target)).toMatch(/"allowedOperations":\["s3_put","s3_post","s3_delete","s3_head"\]/)
    expect(corsFix('minio', target)).toContain('MINIO_API_CORS_ALLOW_ORIGIN=https://app.example.test')
  })

  it('lists request headers rather than *, which R2 refuses', () => {
    expect(corsRule(['https://a.test']).AllowedHeaders).not.toContain('*')
    expect(corsRule(['https://a.test']).AllowedHeaders).toEqual(
      expect.arrayContaining(['content-type', 'x-amz-security-token']),
    )
  })

  it('gives a lifecycle fix for every store', () => {
    for (const provider of PROVIDERS) expect(lifecycleFix(provider, target).length, provider).toBeGreaterThan(40)
    expect(lifecycleFix('aws', target)).toContain('"AbortIncompleteMultipartUpload"')
    expect(lifecycleFix('b2', target)).toContain('daysFromStartingToCancelingUnfinishedLargeFiles')
    expect(lifecycleFix('minio', target)).toContain('MINIO_API_STALE_UPLOADS_EXPIRY')
  })

  // Issue 23: the rule said "Prefix": "", aborting every multipart upload in the bucket, not only the upload API's.
  it("scopes the lifecycle rule to the upload API's keyPrefix, never the whole bucket", () => {
    expect(lifecycleRule('next-s3-uploads/').Filter).toEqual({ Prefix: 'next-s3-uploads/' })
    for (const provider of ['aws', 'ceph', 'r2'] as const) {
      expect(lifecycleFix(provider, { ...target, keyPrefix: 'app/uploads/' }), provider).toContain(
        '"Prefix": "app/uploads/"',
      )
      expect(lifecycleFix(provider, target), provider).not.toContain('"Prefix": ""')
    }
    expect(lifecycleFix('b2', { ...target, keyPrefix: 'app/uploads/' })).toContain('"fileNamePrefix":"app/uploads/"')
  })
})

describe('an existing CORS rule that already does the job', () => {
  const rule = corsRule(['https://app.example.test'])
  it('is one that allows the origin (or *), the three methods, the headers and exposes ETag', () => {
    expect(corsRuleAllows(rule, 'https://app.example.test')).toBe(true)
    expect(corsRuleAllows({ ...rule, AllowedOrigins: ['*'], AllowedHeaders: ['*'] }, 'https://other.test')).toBe(true)
  })
  it('is not one that misses any of them', () => {
    expect(corsRuleAllows(rule, 'https://other.test')).toBe(false)
    expect(corsRuleAllows({ ...rule, AllowedMethods: ['PUT', 'POST'] }, 'https://app.example.test')).toBe(false)
    expect(corsRuleAllows({ ...rule, ExposeHeaders: [] }, 'https://app.example.test')).toBe(false)
    expect(corsRuleAllows({ ...rule, AllowedHeaders: ['content-type'] }, 'https://app.example.test')).toBe(false)
  })
})

describe('a store whose S3 API has no bucket CORS (GetBucketCors 501 NotImplemented)', () => {
  const origin = 'https://app.example.test'
  const fix = 'aws s3api put-bucket-cors …'
  const notImplemented = { status: 501, code: 'NotImplemented' }

  it('tells Swift by the request id header it adds to every reply', () => {
    const reply = (headers: Record<string, string>) => ({ status: 200, headers: new Headers(headers), body: '' })
    expect(storeFromReply(reply({ 'x-openstack-request-id': 'tx1', 'x-trans-id': 'tx1' }))).toBe('swift')
    expect(storeFromReply(reply({ 'x-amz-request-id': 'r1' }))).toBeUndefined()
  })

  it('a refused preflight on Swift fails with proxy-server.conf settings, not a put-bucket-cors command', () => {
    const verdict = corsVerdict({
      origin,
      refused: ['PUT: origin not allowed'],
      bucketCors: notImplemented,
      provider: 'swift',
      fix,
    })
    expect(verdict.status).toBe('fail')
    expect(verdict.summary).toContain('GetBucketCors answered 501 NotImplemented')
    expect(verdict.summary).toContain("CORS is set in the server's configuration")
    expect(verdict.fix).toContain(`cors_allow_origin = ${origin}`)
    expect(verdict.fix).toContain('cors_expose_headers = etag')
    expect(verdict.fix).toContain(`[filter:s3api]\ncors_preflight_allow_origin = ${origin}`)
    expect(verdict.fix).not.toContain('put-bucket-cors')
  })

  it('an unknown store with a 501 gets both places CORS can live (Swift, MinIO)', () => {
    const verdict = corsVerdict({
      origin,
      refused: ['PUT: preflight answered HTTP 400'],
      bucketCors: notImplemented,
      fix,
    })
    expect(verdict.fix).toContain('proxy-server.conf')
    expect(verdict.fix).toContain(`MINIO_API_CORS_ALLOW_ORIGIN=${origin}`)
  })

  it('on Swift a passing preflight still warns: its error replies carry no CORS headers', () => {
    const verdict = corsVerdict({ origin, refused: [], bucketCors: notImplemented, provider: 'swift', fix })
    expect(verdict.status).toBe('warn')
    expect(verdict.summary).toContain('only as a network error')
  })

  it('a store with bucket CORS keeps the S3 API fix', () => {
    expect(corsVerdict({ origin, refused: [], bucketCors: { status: 200 }, fix })).toMatchObject({ status: 'ok' })
    expect(
      corsVerdict({ origin, refused: ['x'], bucketCors: { status: 404, code: 'NoSuchCORSConfiguration' }, fix }),
    ).toMatchObject({ status: 'fail', fix })
  })
})
