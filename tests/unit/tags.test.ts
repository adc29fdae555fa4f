import { createHash } from 'node:crypto'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { uploadObject } from '../../engine/index.ts'
import { sseCustomerKey } from '../../engine/opt-ins/sse-c.ts'
import { putObjectTagging, taggingHeaders } from '../../engine/opt-ins/tags.ts'
import { MIN_PART_SIZE } from '../../protocol/limits.ts'
import { stepThroughTransport, xml } from '../helpers/fake-transport.ts'

const tagging = (tags: Record<string, string>) => taggingHeaders(tags).objectHeaders?.['x-amz-tagging']

describe('taggingHeaders', () => {
  it('writes the tags as one URL query in x-amz-tagging, a space as %20', () => {
    expect(taggingHeaders({ project: 'updraft', 'cost centre': 'a&b=c', café: 'x/y+z' })).toEqual({
      objectHeaders: { 'x-amz-tagging': 'project=updraft&cost%20centre=a%26b%3Dc&caf%C3%A9=x%2Fy%2Bz' },
    })
    expect(taggingHeaders({ empty: '' })).toEqual({ objectHeaders: { 'x-amz-tagging': 'empty=' } })
  })

  it('round-trips any tags through URL query decoding, and never writes a raw + (RGW reads it as +)', () => {
    const text = fc.string({ unit: 'grapheme', maxLength: 20 })
    fc.assert(
      fc.property(fc.dictionary(text, text, { maxKeys: 10, noNullPrototype: true }), (tags) => {
        const header = tagging(tags) ?? ''
        expect(header).not.toMatch(/[+ ]/)
        expect(Object.fromEntries(new URLSearchParams(header))).toEqual({ ...tags })
      }),
      { numRuns: 500 },
    )
  })

  it('adds no header for no tags', () => {
    expect(taggingHeaders({})).toEqual({})
  })

  it('refuses more than 10 tags (S3 limit) with a TypeError naming the option', () => {
    const eleven = Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`t${i}`, 'v']))
    expect(() => taggingHeaders(eleven)).toThrow(
      new TypeError("updraft: tags can hold at most 10 tags (S3's limit), got 11"),
    )
    expect(() => taggingHeaders(Object.fromEntries(Object.entries(eleven).slice(1)))).not.toThrow()
  })
})

describe('x-amz-tagging on the wire (step-through transport)', () => {
  const TAGS = 'project=updraft&stage=test'
  const start = (size: number, extras: object) => {
    const fake = stepThroughTransport()
    const result = uploadObject(new Blob([new Uint8Array(size)]), {
      bucket: 'bucket',
      key: 'tagged.bin',
      region: 'eu-west-1',
      credentials: { accessKeyId: 'AKID', secretAccessKey: 'SECRET' },
      transport: fake.transport,
      ...extras,
    })
    result.catch(() => {})
    return { fake, result }
  }
  it('goes, signed, on the single PutObject', async () => {
    const { fake, result } = start(10, taggingHeaders({ project: 'updraft', stage: 'test' }))
    const [put] = await fake.waitForPending()
    expect(put!.headers!['x-amz-tagging']).toBe(TAGS)
    expect(signed(put!.headers)).toContain('x-amz-tagging')
    put!.respond(200, { ETag: '"e"' })
    await result
  })

  it('goes on CreateMultipartUpload only; with SSE-C spread beside it, the parts carry SSE-C and no tags', async () => {
    const { fake, result } = start(MIN_PART_SIZE + 1, {
      ...taggingHeaders({ project: 'updraft', stage: 'test' }),
      ...sseCustomerKey(new Uint8Array(32)),
    })
    const [create] = await fake.waitForPending()
    expect(create!.headers).toMatchObject({
      'x-amz-tagging': TAGS,
      'x-amz-server-side-encryption-customer-algorithm': 'AES256',
    })
    expect(signed(create!.headers)).toContain('x-amz-tagging')
    create!.respond(200, {}, xml.created())
    for (const part of await fake.waitForPending(2)) {
      expect(part.headers!['x-amz-tagging']).toBeUndefined()
      expect(part.headers!['x-amz-server-side-encryption-customer-algorithm']).toBe('AES256')
      part.respond(200, { ETag: `"${part.step}"` })
    }
    const [complete] = await fake.waitForPending()
    expect(complete!.headers!['x-amz-tagging']).toBeUndefined()
    complete!.respond(200, {}, xml.completed())
    await result
  })

  it('leaves content-type and cache-control to their own options', async () => {
    const { fake, result } = start(10, {
      objectHeaders: { 'content-type': 'text/evil', 'cache-control': 'no-store', 'x-amz-meta-origin': 'page' },
      contentType: 'text/plain',
    })
    const [put] = await fake.waitForPending()
    expect(put!.headers).toMatchObject({ 'content-type': 'text/plain', 'x-amz-meta-origin': 'page' })
    // No cacheControl option: none is sent, whatever objectHeaders said.
    expect(put!.headers!['cache-control']).toBeUndefined()
    put!.respond(200, { ETag: '"e"' })
    await result
  })
})

describe('putObjectTagging (step-through transport)', () => {
  const target = (transport: ReturnType<typeof stepThroughTransport>['transport']) => ({
    bucket: 'bucket',
    key: 'dir/tagged.bin',
    region: 'eu-west-1',
    credentials: { accessKeyId: 'AKID', secretAccessKey: 'SECRET', sessionToken: 'SESSION' },
    transport,
  })

  it('PUTs ?tagging with the tag set as escaped XML and the Content-MD5 S3 requires, signed', async () => {
    const fake = stepThroughTransport()
    const done = putObjectTagging(target(fake.transport), { project: 'updraft', 'a<b>': 'x & y' })
    const [put] = await fake.waitForPending()
    expect(put!.method).toBe('PUT')
    expect(put!.url).toBe('https://bucket.s3.eu-west-1.amazonaws.com/dir/tagged.bin?tagging')
    expect(put!.body).toBe(
      '<Tagging xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><TagSet>' +
        '<Tag><Key>project</Key><Value>updraft</Value></Tag>' +
        '<Tag><Key>a&lt;b&gt;</Key><Value>x &amp; y</Value></Tag>' +
        '</TagSet></Tagging>',
    )
    expect(put!.headers).toMatchObject({
      'content-type': 'application/xml',
      'content-md5': createHash('md5')
        .update(put!.body as string)
        .digest('base64'),
    })
    expect(signed(put!.headers)).toContain('content-md5')
    put!.respond(200)
    await expect(done).resolves.toBeUndefined()
  })

  it('rejects with the S3 error when storage refuses', async () => {
    const fake = stepThroughTransport()
    const done = putObjectTagging(target(fake.transport), { project: 'updraft' })
    done.catch(() => {})
    ;(await fake.waitForPending())[0]!.respond(403, {}, xml.error('AccessDenied'))
    await expect(done).rejects.toMatchObject({ name: 'S3Error', code: 'AccessDenied', status: 403 })
  })

  it('refuses more than 10 tags before sending anything', async () => {
    const fake = stepThroughTransport()
    const eleven = Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`t${i}`, 'v']))
    await expect(putObjectTagging(target(fake.transport), eleven)).rejects.toThrow(TypeError)
    expect(fake.log).toEqual([])
  })
})

const signed = (headers: Record<string, string> | undefined) =>
  /SignedHeaders=([^,]+)/.exec(headers!.authorization!)![1]!.split(';')
