// engine/s3/aws4fetch-signer.ts: SigV4 header signing through aws4fetch's AwsV4Signer, with S3
// Express scoped around it. Held to AWS's published examples, and to the AWS SDK's own signer
// (@smithy/signature-v4, an independent implementation) on generated requests of every shape the
// engine sends, s3 and s3express alike.
import { createHash, createHmac } from 'node:crypto'
import { HttpRequest } from '@smithy/protocol-http'
import { SignatureV4 } from '@smithy/signature-v4'
import fc from 'fast-check'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { type SigV4Request, signV4 } from '../../engine/s3/aws4fetch-signer.ts'
import { objectUrl } from '../../protocol/object-url.ts'

const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'
const example = {
  accessKeyId: 'AKIAIOSFODNN7EXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
  service: 's3',
  region: 'us-east-1',
  datetime: '20130524T000000Z',
}

/**
 * The AWS SDK's Authorization header for the same request: the path as sent (S3's rule,
 * `uriEscapePath: false`), the same headers signed (aws4fetch signs Cache-Control, which the SDK
 * leaves out unless told; neither signs Content-Type here).
 */
/** SHA-256 and its HMAC for the SDK's signer, on node:crypto. */
class NodeSha256 {
  private readonly hash
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.hash = secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(secret))
  }
  update(data: string | ArrayBuffer | ArrayBufferView) {
    this.hash.update(bytes(data))
  }
  async digest() {
    return new Uint8Array(this.hash.digest())
  }
  reset() {}
}
const bytes = (data: string | ArrayBuffer | ArrayBufferView) =>
  typeof data === 'string'
    ? Buffer.from(data)
    : ArrayBuffer.isView(data)
      ? Buffer.from(data.buffer, data.byteOffset, data.byteLength)
      : Buffer.from(data)

async function sdkAuthorization(request: Omit<SigV4Request, 'cache'>): Promise<string> {
  const url = new URL(request.url)
  const headers = Object.fromEntries(
    Object.entries(request.headers).map(([name, value]) => [name.toLowerCase(), value]),
  )
  const signer = new SignatureV4({
    credentials: {
      accessKeyId: request.accessKeyId,
      secretAccessKey: request.secretAccessKey,
      sessionToken: request.sessionToken,
    },
    region: request.region,
    service: request.service,
    sha256: NodeSha256,
    uriEscapePath: false,
    applyChecksum: false,
  })
  const signingDate = new Date(
    request.datetime.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z'),
  )
  const query: Record<string, string> = {}
  for (const [key, value] of url.searchParams) query[key] ??= value
  const signed = await signer.sign(
    new HttpRequest({
      method: request.method,
      protocol: url.protocol,
      hostname: url.hostname,
      port: url.port ? Number(url.port) : undefined,
      path: url.pathname,
      query,
      headers: { ...headers, host: url.host },
    }),
    { signingDate, unsignableHeaders: new Set(['content-type']), signableHeaders: new Set(['cache-control']) },
  )
  return signed.headers.authorization!
}

afterEach(() => vi.restoreAllMocks())

// "Examples: Signature Calculations" in
// https://docs.aws.amazon.com/AmazonS3/latest/API/sig-v4-header-based-auth.html (payloads hashed
// there, so x-amz-content-sha256 carries the hash instead of UNSIGNED-PAYLOAD).
describe("AWS's S3 header-signing examples", () => {
  const examples: Array<
    [
      what: string,
      method: string,
      url: string,
      headers: Record<string, string>,
      signedHeaders: string,
      signature: string,
    ]
  > = [
    // AWS's first example (GET Object with a Range header) is left out: aws4fetch never signs Range
    // (S3 does not ask it to be), and the engine sends none.
    [
      'PUT Object, a $ in the key',
      'PUT',
      'https://examplebucket.s3.amazonaws.com/test%24file.text',
      {
        date: 'Fri, 24 May 2013 00:00:00 GMT',
        'x-amz-storage-class': 'REDUCED_REDUNDANCY',
        'x-amz-content-sha256': '44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072',
      },
      'date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class',
      '98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd',
    ],
    [
      'GET Bucket Lifecycle, a subresource without a value',
      'GET',
      'https://examplebucket.s3.amazonaws.com/?lifecycle',
      { 'x-amz-content-sha256': EMPTY_SHA256 },
      'host;x-amz-content-sha256;x-amz-date',
      'fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543',
    ],
    [
      'GET Bucket (List Objects), two parameters',
      'GET',
      'https://examplebucket.s3.amazonaws.com/?max-keys=2&prefix=J',
      { 'x-amz-content-sha256': EMPTY_SHA256 },
      'host;x-amz-content-sha256;x-amz-date',
      '34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7',
    ],
  ]

  it.each(examples)('%s', async (_, method, url, headers, signedHeaders, signature) => {
    const signed = await signV4({ ...example, method, url, headers, cache: new Map() })
    expect(signed.headers.authorization).toBe(
      `AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, SignedHeaders=${signedHeaders}, Signature=${signature}`,
    )
    expect(signed.headers['x-amz-date']).toBe('20130524T000000Z')
  })
})

// Pieces of keys and upload ids: what URL encoding gets wrong most often.
const tricky = fc.constantFrom(
  ' ',
  '  ',
  '+',
  '%',
  '%20',
  '~',
  '!',
  "'",
  '(',
  ')',
  '*',
  '$',
  '&',
  ',',
  ':',
  ';',
  '=',
  '@',
  '?',
  '#',
  '[',
  ']',
  '"',
  '<',
  '>',
  '\\',
  '^',
  '`',
  '{',
  '|',
  '}',
  'é',
  'Ä',
  '日本',
  '😀',
  '/',
  '\t',
  '-_.',
)
const text = (maxLength: number) =>
  fc
    .array(fc.oneof(tricky, fc.string({ unit: 'grapheme', maxLength: 3 })), { maxLength })
    .map((parts) => parts.join(''))
const headerValue = fc.string({ unit: fc.constantFrom(...'aZ09+/=-_.,;:"() \t'), maxLength: 24 })

const location = fc
  .record({
    bucket: fc.constantFrom('examplebucket', 'my.dotted.bucket', 'uploads--use1-az4--x-s3'),
    key: text(8),
    region: fc.constantFrom('us-east-1', 'eu-west-2', 'auto'),
    endpoint: fc.constantFrom(
      undefined,
      'http://127.0.0.1:9000',
      'http://localhost:80',
      'https://storage.example.com:443',
      'https://minio.example.com:8443',
      'http://[::1]:7480',
      'https://gateway.example.com/s3',
    ),
    forcePathStyle: fc.boolean(),
  })
  .filter((at) => {
    try {
      return !!objectUrl(at)
    } catch {
      return false // empty keys, `.` and `..` segments: objectUrl refuses them
    }
  })

// Every query string the engine signs (engine/upload-object.ts, resume.ts, tags.ts, aws-endpoints.ts).
const query = fc.oneof(
  fc.constant(''),
  fc.constantFrom('?uploads', '?tagging', '?session'),
  fc
    .record({ part: fc.integer({ min: 1, max: 10_000 }), id: text(6) })
    .map(({ part, id }) => `?partNumber=${part}&uploadId=${encodeURIComponent(id)}`),
  text(6).map((id) => `?uploadId=${encodeURIComponent(id)}`),
  fc
    .record({ marker: fc.integer({ min: 0, max: 10_000 }), id: text(6) })
    .map(({ marker, id }) => `?part-number-marker=${marker}&uploadId=${encodeURIComponent(id)}`),
)

// Every header kind the engine sends, each present or not; some names capitalised (lowered either way).
const headers = fc
  .record(
    {
      'content-type': fc.constantFrom('application/xml', 'image/png', 'text/plain; charset=utf-8'),
      'Cache-Control': fc.constantFrom('max-age=3600, public', 'no-cache'),
      'content-md5': fc.base64String({ minLength: 24, maxLength: 24 }),
      'x-amz-tagging': text(4).map((tag) => `project=${encodeURIComponent(tag)}&team=a%20b`),
      'x-amz-meta-author': headerValue,
      'X-Amz-Meta-Note': headerValue,
      'x-amz-server-side-encryption-customer-algorithm': fc.constant('AES256'),
      'x-amz-server-side-encryption-customer-key': fc.base64String({ minLength: 44, maxLength: 44 }),
      'x-amz-server-side-encryption-customer-key-md5': fc.base64String({ minLength: 24, maxLength: 24 }),
      'x-amz-checksum-crc32': fc.base64String({ minLength: 8, maxLength: 8 }),
      'x-amz-checksum-crc32c': fc.base64String({ minLength: 8, maxLength: 8 }),
      'x-amz-checksum-sha256': fc.base64String({ minLength: 44, maxLength: 44 }),
      'x-amz-checksum-algorithm': fc.constantFrom('CRC32', 'CRC32C', 'SHA256'),
      'x-amz-s3session-token': fc.base64String({ maxLength: 64 }),
      'x-amz-storage-class': fc.constantFrom('STANDARD', 'EXPRESS_ONEZONE'),
    },
    { requiredKeys: [] },
  )
  .map((sent) => ({ 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD', ...sent }) as Record<string, string>)

const request = fc
  .record({
    method: fc.constantFrom('GET', 'PUT', 'POST', 'DELETE', 'HEAD'),
    location,
    query,
    headers,
    service: fc.constantFrom('s3', 's3express'),
    accessKeyId: fc.stringMatching(/^[A-Z0-9]{16,20}$/),
    secretAccessKey: fc.string({ minLength: 1, maxLength: 40 }),
    sessionToken: fc.option(fc.base64String({ minLength: 4, maxLength: 80 }), { nil: undefined }),
    date: fc.date({ min: new Date('2000-01-01'), max: new Date('2099-12-31'), noInvalidDate: true }),
  })
  .map(({ location, query, date, ...rest }) => ({
    ...rest,
    url: objectUrl(location) + query,
    region: location.region,
    datetime: date.toISOString().replace(/[:-]|\.\d{3}/g, ''),
  }))

describe("the same requests as the AWS SDK's signer signs them", () => {
  it('gives the same Authorization (what it signs, and the signature) for the URL it sends, which names the same object, for s3 and s3express', async () => {
    await fc.assert(
      fc.asyncProperty(request, async (sent) => {
        const ours = await signV4({ ...sent, cache: new Map() })
        expect(ours.headers.authorization).toBe(await sdkAuthorization({ ...sent, url: ours.url }))
        // As built, but an s3express slash run written `/%2F`: the same key once S3 decodes the path.
        const built = new URL(sent.url)
        if (sent.service === 's3' || !built.pathname.includes('//')) expect(ours.url).toBe(built.href)
        else expect(decodeURIComponent(new URL(ours.url).pathname)).toBe(decodeURIComponent(built.pathname))
      }),
      { numRuns: 500 },
    )
  })

  it('signs an s3express path encoded once, its slash run kept as `/%2F`, in the s3express scope', async () => {
    const sent = {
      ...example,
      service: 's3express',
      method: 'PUT',
      url: objectUrl({ bucket: 'uploads--use1-az4--x-s3', key: 'a b//c+d(1).txt', region: 'us-east-1' }),
      headers: { 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' },
    }
    const ours = await signV4({ ...sent, cache: new Map() })
    expect(new URL(ours.url).pathname).toBe('/a%20b/%2Fc%2Bd%281%29.txt')
    expect(ours.headers.authorization).toContain('/20130524/us-east-1/s3express/aws4_request,')
    expect(ours.headers.authorization).toBe(await sdkAuthorization({ ...sent, url: ours.url }))
  })

  it('sorts the query by key, a key before the longer keys it begins, then by value', async () => {
    const sent = {
      ...example,
      method: 'GET',
      url: 'https://examplebucket.s3.amazonaws.com/k?uploadId=x&partNumber=2&part=1&part-number-marker=3&b=2&b0=&a~=1',
      headers: { 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' },
    }
    expect((await signV4({ ...sent, cache: new Map() })).headers.authorization).toBe(await sdkAuthorization(sent))
  })

  it('sends the session token and date as signed headers, content-type unsigned, host signed with its port', async () => {
    const signed = await signV4({
      ...example,
      method: 'PUT',
      url: 'http://127.0.0.1:9000/uploads/a%20b.txt?partNumber=2&uploadId=x%2By',
      headers: {
        'x-amz-content-sha256': 'UNSIGNED-PAYLOAD',
        'Content-Type': 'image/png',
        'x-amz-meta-note': '  two  spaces  ',
      },
      sessionToken: 'TOKEN',
      cache: new Map(),
    })
    expect(signed.url).toBe('http://127.0.0.1:9000/uploads/a%20b.txt?partNumber=2&uploadId=x%2By')
    expect(signed.headers).toMatchObject({
      'content-type': 'image/png',
      'x-amz-meta-note': 'two  spaces',
      'x-amz-date': '20130524T000000Z',
      'x-amz-security-token': 'TOKEN',
    })
    expect(signed.headers).not.toHaveProperty('host')
    expect(signed.headers.authorization).toContain(
      'SignedHeaders=host;x-amz-content-sha256;x-amz-date;x-amz-meta-note;x-amz-security-token,',
    )
  })
})

it('refuses a header value HTTP cannot carry before anything is sent, as aws4fetch does', async () => {
  // Thrown by the transport instead, fetch's TypeError would pass for a network failure and be retried.
  for (const value of ['写真', 'a\r\nx-amz-acl: public-read']) {
    const sent = {
      ...example,
      method: 'PUT',
      url: 'https://examplebucket.s3.amazonaws.com/k',
      headers: { 'x-amz-meta-title': value },
      cache: new Map(),
    }
    await expect(signV4(sent)).rejects.toThrow(TypeError)
  }
})

describe("the signing-key cache (aws4fetch's)", () => {
  const sent = {
    ...example,
    method: 'PUT',
    url: 'https://examplebucket.s3.amazonaws.com/a.bin',
    headers: { 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' },
  }
  const counting = () => ({ sign: vi.spyOn(crypto.subtle, 'sign') })

  it('derives a key once a day: later requests cost one HMAC', async () => {
    const cache = new Map<string, ArrayBuffer>()
    const { sign } = counting()
    await signV4({ ...sent, cache })
    expect(sign.mock.calls.length).toBe(5)
    const later = { ...sent, url: `${sent.url}?uploads`, method: 'POST', datetime: '20130524T235959Z' }
    const signed = await signV4({ ...later, cache })
    expect(sign.mock.calls.length).toBe(6)
    expect(cache.size).toBe(1)
    // The kept key signs as a fresh derivation does.
    expect(signed).toEqual(await signV4({ ...later, cache: new Map() }))
  })

  it('derives a new key for another day, region, service or secret', async () => {
    const cache = new Map<string, ArrayBuffer>()
    await signV4({ ...sent, cache })
    const others = [
      { datetime: '20130525T000000Z' },
      { region: 'eu-west-2' },
      { service: 's3express' },
      { secretAccessKey: 'another/secret' },
    ]
    for (const [i, other] of others.entries()) {
      const signed = await signV4({ ...sent, ...other, cache })
      expect(cache.size).toBe(i + 2)
      expect(signed.headers.authorization).toBe(await sdkAuthorization({ ...sent, ...other }))
    }
  })
})
