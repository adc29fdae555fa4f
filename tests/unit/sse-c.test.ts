import { createHash } from 'node:crypto'
import fc from 'fast-check'
import { describe, expect, it, vi } from 'vitest'
import { upload, uploadObject } from '../../engine/index.ts'
import { md5 } from '../../engine/opt-ins/md5.ts'
import { sseCustomerKey } from '../../engine/opt-ins/sse-c.ts'
import { MIN_PART_SIZE } from '../../protocol/limits.ts'
import { stepThroughTransport, xml } from '../helpers/fake-transport.ts'

const ALGORITHM = 'x-amz-server-side-encryption-customer-algorithm'
const KEY = 'x-amz-server-side-encryption-customer-key'
const KEY_MD5 = 'x-amz-server-side-encryption-customer-key-md5'

const nodeMd5 = (bytes: Uint8Array) => new Uint8Array(createHash('md5').update(bytes).digest())
const base64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64')
const headersOf = (key: string | Uint8Array) => sseCustomerKey(key).partHeaders!
/** A fixed AES-256 key: bytes 0..31. */
const RAW_KEY = Uint8Array.from({ length: 32 }, (_, i) => i)

describe('md5', () => {
  it('matches node:crypto on any input, across block and padding boundaries', () => {
    const lengthsNearBoundaries = fc
      .constantFrom(0, 1, 55, 56, 57, 63, 64, 65, 119, 120, 128)
      .chain((length) => fc.uint8Array({ minLength: length, maxLength: length }))
    fc.assert(
      fc.property(fc.oneof(fc.uint8Array({ maxLength: 300 }), lengthsNearBoundaries), (bytes) => {
        expect(md5(bytes)).toEqual(nodeMd5(bytes))
      }),
      { numRuns: 1000 },
    )
  })

  it('gives the RFC 1321 test suite digests (A.5)', () => {
    const suite: Record<string, string> = {
      '': 'd41d8cd98f00b204e9800998ecf8427e',
      a: '0cc175b9c0f1b6a831c399e269772661',
      abc: '900150983cd24fb0d6963f7d28e17f72',
      'message digest': 'f96b697d7cb7938d525a2f31aaf161d0',
      abcdefghijklmnopqrstuvwxyz: 'c3fcd3d76192e4007dfb496cca67e13b',
      '12345678901234567890123456789012345678901234567890123456789012345678901234567890':
        '57edf4a22be3c955ac49da2e2107b67a',
    }
    for (const [input, digest] of Object.entries(suite)) {
      expect(Buffer.from(md5(new TextEncoder().encode(input))).toString('hex')).toBe(digest)
    }
  })
})

describe('sseCustomerKey', () => {
  it('sends 32 raw bytes as their base64, with AES256 and the base64 MD5 of the bytes', () => {
    expect(headersOf(RAW_KEY)).toEqual({
      [ALGORITHM]: 'AES256',
      [KEY]: base64(RAW_KEY),
      'x-amz-server-side-encryption-customer-key-MD5': base64(nodeMd5(RAW_KEY)),
    })
    expect(sseCustomerKey(RAW_KEY).objectHeaders).toBeUndefined()
  })

  it('takes a string that already is base64 of 32 bytes as is, and hashes the decoded bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), (bytes) => {
        const headers = headersOf(base64(bytes))
        expect(headers[KEY]).toBe(base64(bytes))
        expect(headers['x-amz-server-side-encryption-customer-key-MD5']).toBe(base64(nodeMd5(bytes)))
        expect(headers).toEqual(headersOf(bytes))
      }),
    )
  })

  it('base64-encodes any other string, as UTF-8 (the AWS SDK rule)', () => {
    const passphrase = 'abcdefghijklmnopqrstuvwxyz012345'
    const utf8 = new TextEncoder().encode(passphrase)
    expect(headersOf(passphrase)).toEqual({
      [ALGORITHM]: 'AES256',
      [KEY]: 'YWJjZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXowMTIzNDU=',
      'x-amz-server-side-encryption-customer-key-MD5': base64(nodeMd5(utf8)),
    })
    // 32 characters are also valid base64, of 24 bytes: not a 32-byte base64 key, so they are the key.
    const alsoBase64 = 'QUJDREVGR0hJSktMTU5PUFFSU1RVVldY'
    expect(Buffer.from(alsoBase64, 'base64')).toHaveLength(24)
    expect(headersOf(alsoBase64)[KEY]).toBe(base64(new TextEncoder().encode(alsoBase64)))
    // 16 two-byte characters make 32 UTF-8 bytes.
    expect(headersOf('é'.repeat(16))[KEY]).toBe(base64(new TextEncoder().encode('é'.repeat(16))))
  })

  it('copies the bytes it is given: changing them afterwards changes nothing', () => {
    const key = RAW_KEY.slice()
    const headers = headersOf(key)
    key.fill(0)
    expect(headers[KEY]).toBe(base64(RAW_KEY))
  })

  it('refuses a key that is not 32 bytes with a TypeError naming the option and the length, never the key', () => {
    const wrong: Array<[string | Uint8Array, number]> = [
      [new Uint8Array(16), 16],
      [new Uint8Array(33), 33],
      ['', 0],
      ['s3cret-passphrase', 17],
      ['é'.repeat(32), 64],
      // base64 of 31 bytes ('==' padding): not a 32-byte key, so taken as its 44 characters.
      [base64(RAW_KEY.subarray(1)), 44],
    ]
    for (const [key, length] of wrong) {
      const error = (() => {
        try {
          sseCustomerKey(key)
        } catch (caught) {
          return caught as Error
        }
      })()
      expect(error).toBeInstanceOf(TypeError)
      expect(error!.message).toMatch(/^updraft: sseCustomerKey must be a 256-bit AES key/)
      expect(error!.message).toContain(`got ${length} bytes`)
      if (typeof key === 'string' && key) expect(error!.message).not.toContain(key)
    }
  })
})

describe('SSE-C headers on the wire (step-through transport)', () => {
  const target = (size: number, queueSize?: number) => {
    const fake = stepThroughTransport()
    const result = uploadObject(new Blob([new Uint8Array(size)]), {
      bucket: 'bucket',
      key: 'secret.bin',
      region: 'eu-west-1',
      credentials: { accessKeyId: 'AKID', secretAccessKey: 'SECRET' },
      transport: fake.transport,
      partConcurrency: queueSize,
      ...sseCustomerKey(RAW_KEY),
    })
    result.catch(() => {})
    return { fake, result }
  }
  const signedNames = (headers: Record<string, string> | undefined) =>
    /SignedHeaders=([^,]+)/.exec(headers!.authorization!)![1]!.split(';')
  const expectSseC = (headers: Record<string, string> | undefined) => {
    expect(headers).toMatchObject({
      [ALGORITHM]: 'AES256',
      [KEY]: base64(RAW_KEY),
      [KEY_MD5]: base64(nodeMd5(RAW_KEY)),
    })
    expect(signedNames(headers)).toEqual(expect.arrayContaining([ALGORITHM, KEY, KEY_MD5]))
  }
  const expectNoSseC = (headers: Record<string, string> | undefined) =>
    expect(Object.keys(headers!).filter((name) => name.includes('customer'))).toEqual([])

  it('go, signed, on the single PutObject', async () => {
    const { fake, result } = target(1000)
    const [put] = await fake.waitForPending()
    expect(put!.step).toBe('PUT')
    expectSseC(put!.headers)
    put!.respond(200, { ETag: '"e"' })
    await expect(result).resolves.toMatchObject({ etag: '"e"' })
  })

  it('go on CreateMultipartUpload and every UploadPart, not on CompleteMultipartUpload', async () => {
    const { fake, result } = target(2 * MIN_PART_SIZE + 1)
    const [create] = await fake.waitForPending()
    expect(create!.step).toBe('POST ?uploads')
    expectSseC(create!.headers)
    create!.respond(200, {}, xml.created())
    const parts = await fake.waitForPending(3)
    for (const part of parts) {
      expectSseC(part.headers)
      part.respond(200, { ETag: `"${part.step}"` })
    }
    const [complete] = await fake.waitForPending()
    expect(complete!.step).toBe('POST ?uploadId')
    expectNoSseC(complete!.headers)
    complete!.respond(200, {}, xml.completed())
    await expect(result).resolves.toMatchObject({ etag: '"final-3"' })
  })

  it('stay off AbortMultipartUpload', async () => {
    const { fake, result } = target(2 * MIN_PART_SIZE, 1)
    const [create] = await fake.waitForPending()
    create!.respond(200, {}, xml.created())
    const [first] = await fake.waitForPending()
    first!.respond(403, {}, xml.error('AccessDenied'))
    const [abort] = await fake.waitForPending()
    expect(abort!.step).toBe('DELETE ?uploadId')
    expectNoSseC(abort!.headers)
    abort!.respond(204)
    await expect(result).rejects.toMatchObject({ code: 'AccessDenied' })
  })
})

describe('SSE-C through upload()', () => {
  it('refuses presigned mode, where the upload API signs the headers and would drop the key silently', async () => {
    const fetchSpy = vi.spyOn(globalThis, 'fetch')
    await expect(
      upload(new Blob(['secret']), {
        strategy: 'presigned',
        api: 'http://127.0.0.1:9/api',
        ...sseCustomerKey(new Uint8Array(32)),
      }),
    ).rejects.toThrow("updraft: objectHeaders and partHeaders (SSE-C, tags) need strategy: 'token'")
    expect(fetchSpy).not.toHaveBeenCalled()
    fetchSpy.mockRestore()
  })
})
