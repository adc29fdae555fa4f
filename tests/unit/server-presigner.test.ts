// The part-URL presigner (server/sigv4.ts) against @aws-sdk/s3-request-presigner: the same URL,
// character for character, for the same inputs and date. (Its speed is measured in bench/, not here.)
import { PutObjectCommand, S3Client, UploadPartCommand } from '@aws-sdk/client-s3'
import { getSignedUrl } from '@aws-sdk/s3-request-presigner'
import { afterAll, describe, expect, it } from 'vitest'
import { objectUrl } from '../../protocol/object-url.ts'
import { createQueryPresigner } from '../../server/sigv4.ts'

const DATE = new Date('2024-02-29T23:59:58Z')
const KEYS = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' }

const stores = [
  { name: 'AWS, virtual-hosted', region: 'eu-west-1', endpoint: undefined, forcePathStyle: false },
  { name: 'custom endpoint, path-style', region: 'us-east-1', endpoint: 'http://127.0.0.1:7480', forcePathStyle: true },
  { name: 'https on its default port', region: 'auto', endpoint: 'https://account.r2.example.com', forcePathStyle: true },
]
const keys = [
  'next-s3-uploads/3f1c2a9e-0b7d-4e55-9a0c-1d2e3f405060/photo.png',
  "odd/!'()*~ chars/ünïcödé 🐘/a+b=c&d.txt",
  'trailing/slash/',
]
const sessionTokens = [undefined, 'IQoJb3JpZ2luX2VjE+/=session-token']

const clients: S3Client[] = []
afterAll(() => clients.forEach((client) => client.destroy()))

function sdkClient(store: (typeof stores)[number], sessionToken?: string) {
  const client = new S3Client({
    region: store.region,
    credentials: { ...KEYS, sessionToken },
    ...(store.endpoint ? { endpoint: store.endpoint } : {}),
    forcePathStyle: store.forcePathStyle,
    requestChecksumCalculation: 'WHEN_REQUIRED',
  })
  clients.push(client)
  return client
}

describe('createQueryPresigner equals @aws-sdk/s3-request-presigner', () => {
  for (const store of stores) {
    for (const sessionToken of sessionTokens) {
      it.each(keys)(`UploadPart on ${store.name}${sessionToken ? ', session token' : ''}: %s`, async (key) => {
        const uploadId = 'VXBsb2FkIElEIGZvciA2aWWpbmcncyBteS1tb3ZpZS5tMnRzIHVwbG9hZA--/+='
        const expected = await getSignedUrl(
          sdkClient(store, sessionToken),
          new UploadPartCommand({ Bucket: 'uploads', Key: key, UploadId: uploadId, PartNumber: 42, ContentLength: 5242880 }),
          { expiresIn: 3600, signingDate: DATE },
        )
        const presign = createQueryPresigner({ ...KEYS, sessionToken }, store.region)
        const actual = presign({
          method: 'PUT',
          url: objectUrl({ ...store, bucket: 'uploads', key }),
          // The SDK adds x-id to every operation; part URLs need not carry it, the comparison does.
          query: { partNumber: '42', uploadId, 'x-id': 'UploadPart' },
          headers: { 'content-length': '5242880' },
          expiresIn: 3600,
          date: DATE,
        })
        expect(actual).toBe(expected)
        expect(new URL(actual).searchParams.get('X-Amz-SignedHeaders')).toBe('content-length;host')
      })
    }
  }

  it('PutObject with Content-Type and Cache-Control signed', async () => {
    const store = stores[1]!
    const key = 'a/b c.png'
    const expected = await getSignedUrl(
      sdkClient(store),
      new PutObjectCommand({ Bucket: 'uploads', Key: key, ContentType: 'image/png', CacheControl: 'max-age=630720000', ContentLength: 10 }),
      { expiresIn: 900, signingDate: DATE, signableHeaders: new Set(['content-type', 'cache-control']) },
    )
    const actual = createQueryPresigner(KEYS, store.region)({
      method: 'PUT',
      url: objectUrl({ ...store, bucket: 'uploads', key }),
      query: { 'x-id': 'PutObject' },
      headers: { 'Content-Type': 'image/png', 'Cache-Control': 'max-age=630720000', 'Content-Length': '10' },
      expiresIn: 900,
      date: DATE,
    })
    expect(actual).toBe(expected)
  })

  it('derives the signing key again when the day changes', () => {
    const presign = createQueryPresigner(KEYS, 'us-east-1')
    const request = { method: 'PUT', url: 'http://127.0.0.1:1/b/k', expiresIn: 60 }
    const before = presign({ ...request, date: new Date('2024-01-01T23:59:59Z') })
    const after = presign({ ...request, date: new Date('2024-01-02T00:00:00Z') })
    const fresh = createQueryPresigner(KEYS, 'us-east-1')({ ...request, date: new Date('2024-01-02T00:00:00Z') })
    expect(after).toBe(fresh)
    expect(after).not.toBe(before)
  })

  it.each([0, 604_801, 1.5])('refuses expiresIn %s', (expiresIn) => {
    expect(() => createQueryPresigner(KEYS, 'us-east-1')({ method: 'PUT', url: 'http://h/b/k', expiresIn })).toThrow(/expiresIn/)
  })
})
