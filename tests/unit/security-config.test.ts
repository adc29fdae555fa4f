// The options issue 10 added are checked when the handler is created, with messages that name
// the option and the value (server/config.ts), and their defaults depend on the store.
import { describe, expect, it } from 'vitest'
import { resolveConfig, type UploadHandlerConfig } from '../../server/config.ts'

const base: UploadHandlerConfig = { accessKeyId: 'a', secretAccessKey: 'b', bucket: 'uploads', region: 'us-east-1' }
const custom = { ...base, endpoint: 'http://127.0.0.1:9000', forcePathStyle: true }

describe('resolveConfig, security options', () => {
  it.each<[string, UploadHandlerConfig, RegExp]>([
    ['a keyPrefix with a wildcard', { keyPrefix: 'uploads/*' }, /keyPrefix must be .* got "uploads\/\*"/],
    ['an empty keyPrefix', { keyPrefix: '' }, /keyPrefix must be a non-empty/],
    ['a keyPrefix with a .. segment', { keyPrefix: 'a/../b/' }, /'\.\.' segment/],
    ['a keyPrefix starting with /', { keyPrefix: '/uploads/' }, /no leading '\/'/],
    [
      'an unknown canned ACL',
      { objectAcl: 'public' as never },
      /objectAcl must be false or a canned ACL .* got 'public'/,
    ],
    [
      'a Content-Disposition with a line break',
      { contentDisposition: 'attachment\r\nx: y' },
      /contentDisposition must be printable ASCII/,
    ],
    [
      'an origin with a path',
      { allowedOrigins: ['https://app.example.com/page'] },
      /allowedOrigins must hold origins .* got 'https:\/\/app.example.com\/page'/,
    ],
    ['the opaque origin', { allowedOrigins: ['null'] }, /allowedOrigins must hold origins/],
    [
      'an unknown presignWith',
      { presignWith: 'both' as never },
      /presignWith must be 'session' or 'server-key', got 'both'/,
    ],
  ])('refuses %s', (_what, extra, message) => {
    expect(() => resolveConfig({ ...base, ...extra }, {})).toThrow(message)
  })

  it("refuses presignWith 'session' where there is no STS, saying why", () => {
    expect(() => resolveConfig({ ...custom, presignWith: 'session' }, {})).toThrow(
      /presignWith 'session' needs an STS, and this config has none: GetFederationToken exists only on AWS STS/,
    )
  })

  it('signs with a session where there is an STS (AWS, assume-role, a named STS endpoint), else with the server key', () => {
    expect(resolveConfig(base, {}).presignWith).toBe('session')
    expect(
      resolveConfig({ ...custom, sts: { mode: 'assume-role', roleArn: 'arn:aws:iam:::role/r' } }, {}).presignWith,
    ).toBe('session')
    expect(resolveConfig({ ...custom, sts: { endpoint: 'http://127.0.0.1:9001' } }, {}).presignWith).toBe('session')
    expect(resolveConfig(custom, {}).presignWith).toBe('server-key')
    expect(resolveConfig({ ...base, info: { tokenUnavailableReason: 'no STS here' } }, {}).presignWith).toBe(
      'server-key',
    )
  })

  it("pins 'bucket-owner-full-control' on AWS (what buckets with ACLs disabled accept), 'private' elsewhere, none with false", () => {
    expect(resolveConfig(base, {}).objectAcl).toBe('bucket-owner-full-control')
    expect(resolveConfig({ ...base, endpoint: 'https://s3.eu-west-1.amazonaws.com' }, {}).objectAcl).toBe(
      'bucket-owner-full-control',
    )
    expect(resolveConfig(custom, {}).objectAcl).toBe('private')
    expect(resolveConfig({ ...custom, objectAcl: false }, {}).objectAcl).toBeUndefined()
    expect(resolveConfig({ ...custom, objectAcl: 'public-read' }, {}).objectAcl).toBe('public-read')
  })
})
