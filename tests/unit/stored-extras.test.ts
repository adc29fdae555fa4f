// /complete's rule for what an object may carry beyond what was issued (server/stored-extras.ts),
// on HEAD and ranged GET replies as the AWS SDK parses them; the flows run on RGW and s3rver in
// tests/security-stored-extras.test.ts.
import type { GetObjectCommandOutput, HeadObjectCommandOutput } from '@aws-sdk/client-s3'
import { describe, expect, it } from 'vitest'
import { resolveConfig } from '../../server/config.ts'
import { normalizeAllowance, unissuedExtras } from '../../server/stored-extras.ts'

const plain = { ContentType: 'image/png', CacheControl: 'max-age=630720000', Metadata: {} }
/** A whole reply, as /complete passes it: a HEAD's, or its ranged GET's (server/stored-object.ts). */
const head = (reply: HeadObjectCommandOutput | Omit<GetObjectCommandOutput, 'Body'>) => reply

describe('unissuedExtras', () => {
  it('a ranged GET’s reply is read as a HEAD’s (the same headers)', () => {
    const got = head({ ...plain, ContentRange: 'bytes 0-15/100', ContentEncoding: 'gzip', TagCount: 1, $metadata: {} })
    expect(unissuedExtras(got, {})).toEqual(['Content-Encoding', 'x-amz-tagging (1 tag)'])
  })

  it('an object as issued carries nothing extra, SSE and storage class included', () => {
    expect(
      unissuedExtras(head({ ...plain, ServerSideEncryption: 'AES256', StorageClass: 'STANDARD', $metadata: {} }), {}),
    ).toEqual([])
  })

  it('names every header the upload API never issues, never its value', () => {
    const head = {
      ...plain,
      WebsiteRedirectLocation: 'https://evil.example/',
      ContentEncoding: 'gzip',
      ContentLanguage: 'xx',
      Expires: new Date('2099-01-01'),
      ExpiresString: 'Thu, 01 Jan 2099 00:00:00 GMT',
      ContentDisposition: 'inline',
      Metadata: { Owner: 'mallory' },
      TagCount: 2,
      $metadata: {},
    }
    expect(unissuedExtras(head, {})).toEqual([
      'x-amz-website-redirect-location',
      'Content-Encoding',
      'Content-Language',
      'Expires',
      'Content-Disposition',
      'x-amz-meta-owner',
      'x-amz-tagging (2 tags)',
    ])
  })

  it('an Expires the SDK parsed without its text still counts', () => {
    expect(unissuedExtras(head({ ...plain, Expires: new Date(0), $metadata: {} }), {})).toEqual(['Expires'])
  })

  it('the configured Content-Disposition passes; any other does not', () => {
    const head = { ...plain, ContentDisposition: 'attachment', $metadata: {} }
    expect(unissuedExtras(head, { contentDisposition: 'attachment' })).toEqual([])
    expect(unissuedExtras(head, { contentDisposition: 'attachment; filename="a.png"' })).toEqual([
      'Content-Disposition',
    ])
  })

  it('allowedObjectExtras lets the named tags and x-amz-meta-* through, and only those', () => {
    const head = { ...plain, Metadata: { origin: 'camera', role: 'admin' }, TagCount: 1, $metadata: {} }
    expect(unissuedExtras(head, { allowedObjectExtras: { tags: true, meta: ['origin'] } })).toEqual(['x-amz-meta-role'])
    expect(unissuedExtras(head, { allowedObjectExtras: { meta: ['origin', 'role'] } })).toEqual([
      'x-amz-tagging (1 tag)',
    ])
  })
})

describe('allowedObjectExtras in the config', () => {
  const config = (allowedObjectExtras: unknown) =>
    resolveConfig(
      {
        accessKeyId: 'AK',
        secretAccessKey: 'SK',
        bucket: 'b',
        region: 'us-east-1',
        allowedObjectExtras: allowedObjectExtras as never,
      },
      {},
    )

  it('names are lower-cased, the x-amz-meta- prefix taken off', () => {
    expect(config({ tags: true, meta: ['X-Amz-Meta-Origin', 'project'] }).allowedObjectExtras).toEqual({
      tags: true,
      meta: ['origin', 'project'],
    })
    expect(normalizeAllowance(undefined)).toBeUndefined()
  })

  it.each([
    [{ tags: 'yes' }, 'allowedObjectExtras.tags must be true or false, got "yes"'],
    [{ meta: 'origin' }, 'allowedObjectExtras.meta must be an array of names, got "origin"'],
    [
      { meta: ['has space'] },
      'allowedObjectExtras.meta must hold x-amz-meta-* names such as \'project\', got "has space"',
    ],
    [true, "allowedObjectExtras must be an object such as { tags: true, meta: ['project'] }, got true"],
  ])('%j is refused, saying what it must be', (given, message) => {
    expect(() => config(given)).toThrow(new TypeError(`updraft: ${message}`))
  })
})
