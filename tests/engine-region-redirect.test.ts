// Issue 14, "region redirect": a bucket in another region than the one configured. AWS answers
// such a request with 301 PermanentRedirect (`x-amz-bucket-region`) or 400
// AuthorizationHeaderMalformed (`<Region>`); with `awsEndpoints()` the engine signs again for the
// named region and sends the rest of the upload there. A redirecting front on loopback plays
// AWS's part in front of Ceph RGW: it refuses every request not signed for BUCKET_REGION and
// forwards the others, whose signatures RGW checks.
import { createServer, request as forward } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { readObject, sdkClient, sha256, testBytes } from '../dev/s3-client.ts'
import { S3Error, uploadObject } from '../engine/index.ts'
import { awsEndpoints, EndpointRuleError } from '../engine/opt-ins/aws-endpoints.ts'
import { MIN_PART_SIZE } from '../protocol/limits.ts'

const BUCKET_REGION = 'eu-central-1'
const rgw = inject('rgw')
const admin = sdkClient(rgw)
const bytes = testBytes(3 * MIN_PART_SIZE + 1, 14)

type Refusal = '301' | '400'
let refusal: Refusal = '301'
/** The signing region of every request the front saw, and what it did with it. */
let seen: Array<{ step: string; region: string; redirected: boolean }> = []
let front: { endpoint: string; stop(): Promise<void> }

beforeAll(async () => {
  const upstream = new URL(rgw.endpoint)
  const server = createServer((incoming, outgoing) => {
    const region = /Credential=[^/]+\/\d{8}\/([^/]+)\//.exec(String(incoming.headers.authorization))?.[1] ?? ''
    const step = `${incoming.method} ${new URL(incoming.url!, 'http://x').search.replace(/=[^&]*/g, '')}`.trim()
    const redirected = region !== BUCKET_REGION
    seen.push({ step, region, redirected })
    if (redirected) {
      incoming.resume()
      // What AWS sends: the 301 names the region in a header, the 400 in its body only.
      if (refusal === '301') {
        outgoing.writeHead(301, { 'content-type': 'application/xml', 'x-amz-bucket-region': BUCKET_REGION })
        outgoing.end(
          '<Error><Code>PermanentRedirect</Code><Message>The bucket you are attempting to access must be addressed using the specified endpoint.</Message></Error>',
        )
      } else {
        outgoing.writeHead(400, { 'content-type': 'application/xml' })
        outgoing.end(
          `<Error><Code>AuthorizationHeaderMalformed</Code><Message>the region '${region}' is wrong; expecting '${BUCKET_REGION}'</Message><Region>${BUCKET_REGION}</Region></Error>`,
        )
      }
      return
    }
    const onward = forward(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: incoming.method,
        path: incoming.url,
        headers: incoming.headers,
      },
      (reply) => {
        outgoing.writeHead(reply.statusCode ?? 502, reply.headers)
        reply.pipe(outgoing)
      },
    )
    onward.on('error', () => outgoing.destroy())
    incoming.pipe(onward)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  front = {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
})

afterAll(async () => {
  await front?.stop()
  admin.destroy()
})

const target = (label: string) => ({
  bucket: rgw.bucket,
  key: `region-redirect/${label}-${crypto.randomUUID()}.bin`,
  // Configured for another region than the bucket's.
  region: 'us-east-1',
  endpoint: front.endpoint,
  forcePathStyle: true,
  credentials: rgw.credentials,
  partConcurrency: 4,
})

async function expectStored(key: string, size: number) {
  expect(sha256(await readObject(admin, rgw.bucket, key))).toBe(sha256(bytes.subarray(0, size)))
}

describe('with awsEndpoints(): a bucket followed to its region (redirecting front before RGW)', () => {
  it.each<[Refusal, number]>([
    ['301', bytes.length],
    ['301', 1024],
    ['400', bytes.length],
    ['400', 1024],
  ])(
    'a %s naming the region: signed again there, every later request too; %i B read back byte-exact',
    async (kind, size) => {
      refusal = kind
      seen = []
      const where = target(`${kind}-${size}`)
      const result = await uploadObject(new Blob([bytes.subarray(0, size)]), { ...where, ...awsEndpoints() })

      await expectStored(where.key, size)
      expect(result.key).toBe(where.key)
      // One refusal, of the first request: the region it names sticks for the rest of the upload.
      expect(seen.filter((request) => request.redirected)).toEqual([
        { step: seen[0]!.step, region: 'us-east-1', redirected: true },
      ])
      expect(seen.slice(1).every((request) => request.region === BUCKET_REGION)).toBe(true)
      // Create, the refused one again, 4 parts, Complete, and a HEAD for the ETag RGW's Complete reply leaves out.
      expect(seen.length).toBe(size > MIN_PART_SIZE ? 1 + 1 + 4 + 1 + 1 : 2)
      expect(result.etag).not.toBe('')
    },
  )

  it('refuses, before any request, a combination S3 refuses', async () => {
    seen = []
    const failure = uploadObject(new Blob([bytes.subarray(0, 10)]), {
      ...target('fips'),
      ...awsEndpoints({ useFipsEndpoint: true }),
    })
    await expect(failure).rejects.toThrow(EndpointRuleError)
    await expect(failure).rejects.toThrow(/useFipsEndpoint .* cannot be combined with a custom endpoint/)
    expect(seen).toEqual([])
  })
})

describe("without it: the refusal names the bucket's region, and nothing is re-sent", () => {
  it.each<Refusal>(['301', '400'])('%s: an S3Error with the region, after one request', async (kind) => {
    refusal = kind
    seen = []
    const failure = uploadObject(new Blob([bytes.subarray(0, 1024)]), target(`plain-${kind}`))
    await expect(failure).rejects.toBeInstanceOf(S3Error)
    await expect(failure).rejects.toMatchObject({
      code: kind === '301' ? 'PermanentRedirect' : 'AuthorizationHeaderMalformed',
      status: Number(kind),
    })
    expect(seen).toHaveLength(1)
  })
})
