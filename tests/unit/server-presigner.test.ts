// server/presigner.ts, the S3RequestPresigner wrapper the upload API signs with, against the SDK's
// getSignedUrl on an S3 client for the same command: the same URL, character for character, for
// the same inputs and date; and the headers the page must send stay signed headers, never moved
// into the query. (Its speed is measured in bench/, not here.)
import { PutObjectCommand, S3Client, UploadPartCommand } from '@aws-sdk/client-s3'
import { getSignedUrl } from '@aws-sdk/s3-request-presigner'
import { afterAll, describe, expect, it } from 'vitest'
import { objectUrl } from '../../protocol/object-url.ts'
import { createPresigner } from '../../server/presigner.ts'

const DATE = new Date('2024-02-29T23:59:58Z')
const KEYS = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' }

const stores = [
  { name: 'AWS, virtual-hosted', region: 'eu-west-1', endpoint: undefined, forcePathStyle: false },
  { name: 'custom endpoint, path-style', region: 'us-east-1', endpoint: 'http://127.0.0.1:7480', forcePathStyle: true },
  {
    name: 'https on its default port',
    region: 'auto',
    endpoint: 'https://account.r2.example.com',
    forcePathStyle: true,
  },
]
const keys = [
  'next-s3-uploads/3f1c2a9e-0b7d-4e55-9a0c-1d2e3f405060/photo.png',
  "odd/!'()*~ chars/ünïcödé 🐘/a+b=c&d.txt",
  'trailing/slash/',
]
const sessionTokens = [undefined, 'IQoJb3JpZ2luX2VjE+/=session-token']

const clients: S3Client[] = []
afterAll(() => {
  for (const client of clients) client.destroy()
})

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

describe('createPresigner equals getSignedUrl for the same command', () => {
  for (const store of stores) {
    for (const sessionToken of sessionTokens) {
      it.each(keys)(`UploadPart on ${store.name}${sessionToken ? ', session token' : ''}: %s`, async (key) => {
        const uploadId = 'VXBsb2FkIElEIGZvciA2aWWpbmcncyBteS1tb3ZpZS5tMnRzIHVwbG9hZA--/+='
        const expected = await getSignedUrl(
          sdkClient(store, sessionToken),
          new UploadPartCommand({
            Bucket: 'uploads',
            Key: key,
            UploadId: uploadId,
            PartNumber: 42,
            ContentLength: 5242880,
          }),
          { expiresIn: 3600, signingDate: DATE },
        )
        const actual = await createPresigner(
          { ...KEYS, sessionToken },
          store.region,
        )({
          method: 'PUT',
          url: objectUrl({ ...store, bucket: 'uploads', key }),
          // The SDK adds x-id to every operation; part URLs need not carry it, the comparison does.
          query: { partNumber: '42', uploadId, 'x-id': 'UploadPart' },
          headers: { 'content-length': '5242880' },
          expiresIn: 3600,
          date: DATE,
        })
        expect(actual).toBe(expected)
        const query = new URL(actual).searchParams
        expect(query.get('X-Amz-SignedHeaders')).toBe('content-length;host')
        expect(query.get('X-Amz-Content-Sha256')).toBe('UNSIGNED-PAYLOAD')
        expect(query.get('X-Amz-Security-Token')).toBe(sessionToken ?? null)
      })
    }
  }

  it("UploadPart with the part's content-md5, signed as a header", async () => {
    const store = stores[0]!
    const md5 = '1B2M2Y8AsgTpgAmY7PhCfg=='
    const expected = await getSignedUrl(
      sdkClient(store),
      new UploadPartCommand({
        Bucket: 'uploads',
        Key: 'k',
        UploadId: 'u',
        PartNumber: 1,
        ContentLength: 5242880,
        ContentMD5: md5,
      }),
      { expiresIn: 3600, signingDate: DATE },
    )
    const actual = await createPresigner(
      KEYS,
      store.region,
    )({
      method: 'PUT',
      url: objectUrl({ ...store, bucket: 'uploads', key: 'k' }),
      query: { partNumber: '1', uploadId: 'u', 'x-id': 'UploadPart' },
      headers: { 'content-length': '5242880', 'content-md5': md5 },
      expiresIn: 3600,
      date: DATE,
    })
    expect(actual).toBe(expected)
    expect(new URL(actual).searchParams.get('X-Amz-SignedHeaders')).toBe('content-length;content-md5;host')
  })

  it('PutObject: Content-Type, Cache-Control, Content-Length, x-amz-acl and Content-Disposition all signed as headers, none in the query', async () => {
    const store = stores[1]!
    const key = 'a/b c.png'
    // getSignedUrl leaves Content-Type and Cache-Control unsigned and moves x-amz-acl into the
    // query unless told otherwise; the wrapper tells the SDK so for every header it is given.
    const expected = await getSignedUrl(
      sdkClient(store),
      new PutObjectCommand({
        Bucket: 'uploads',
        Key: key,
        ContentType: 'image/png',
        CacheControl: 'max-age=630720000',
        ContentLength: 10,
        ACL: 'private',
        ContentDisposition: 'attachment',
      }),
      {
        expiresIn: 900,
        signingDate: DATE,
        signableHeaders: new Set(['content-type', 'cache-control']),
        unhoistableHeaders: new Set(['x-amz-acl']),
      },
    )
    const actual = await createPresigner(
      KEYS,
      store.region,
    )({
      method: 'PUT',
      url: objectUrl({ ...store, bucket: 'uploads', key }),
      query: { 'x-id': 'PutObject' },
      headers: {
        'Content-Type': 'image/png',
        'Cache-Control': 'max-age=630720000',
        'Content-Length': '10',
        'x-amz-acl': 'private',
        'Content-Disposition': 'attachment',
      },
      expiresIn: 900,
      date: DATE,
    })
    expect(actual).toBe(expected)
    const query = new URL(actual).searchParams
    expect(query.get('X-Amz-SignedHeaders')).toBe(
      'cache-control;content-disposition;content-length;content-type;host;x-amz-acl',
    )
    expect([...query.keys()].filter((name) => !name.startsWith('X-Amz-'))).toEqual(['x-id'])
  })

  it('a host on a default port is signed without it, as the browser sends it', async () => {
    const request = { method: 'PUT', url: 'https://storage.example.com:443/b/k', expiresIn: 60, date: DATE }
    const withPort = await createPresigner(KEYS, 'us-east-1')(request)
    const without = await createPresigner(KEYS, 'us-east-1')({ ...request, url: 'https://storage.example.com/b/k' })
    expect(withPort.replace(':443', '')).toBe(without)
  })

  it('derives the signing key again when the day changes', async () => {
    const presign = createPresigner(KEYS, 'us-east-1')
    const request = { method: 'PUT', url: 'http://127.0.0.1:1/b/k', expiresIn: 60 }
    const before = await presign({ ...request, date: new Date('2024-01-01T23:59:59Z') })
    const after = await presign({ ...request, date: new Date('2024-01-02T00:00:00Z') })
    const fresh = await createPresigner(KEYS, 'us-east-1')({ ...request, date: new Date('2024-01-02T00:00:00Z') })
    expect(after).toBe(fresh)
    expect(after).not.toBe(before)
  })

  it.each([0, 604_801, 1.5])('refuses expiresIn %s', async (expiresIn) => {
    await expect(createPresigner(KEYS, 'us-east-1')({ method: 'PUT', url: 'http://h/b/k', expiresIn })).rejects.toThrow(
      RangeError,
    )
  })

  it('refuses a URL that already has a query string', async () => {
    await expect(
      createPresigner(KEYS, 'us-east-1')({ method: 'PUT', url: 'http://h/b/k?x=1', expiresIn: 60 }),
    ).rejects.toThrow(/without a query string/)
  })
})
