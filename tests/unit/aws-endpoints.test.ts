// awsEndpoints() (updraft-s3/aws-endpoints) in the engine: requests go where S3's endpoint rules say
// (the rules themselves are table-tested in endpoint-rules.test.ts), and a 301 that names the
// bucket's region moves the upload to that region's host. No store answers for AWS's host names
// on loopback, so this is a step-through of the requests; tests/engine-region-redirect.test.ts
// follows a redirect end to end in front of RGW.
import { describe, expect, it } from 'vitest'
import { uploadObject } from '../../engine/index.ts'
import { awsEndpoints, EndpointRuleError } from '../../engine/opt-ins/aws-endpoints.ts'
import { stepThroughTransport, xml } from '../helpers/fake-transport.ts'

function start(
  bucket: string,
  rules: Parameters<typeof awsEndpoints>[0] = {},
  fake = stepThroughTransport(),
  sessionToken?: string,
) {
  const result = uploadObject(new Blob(['hello']), {
    bucket,
    key: 'photos/a b.jpg',
    region: 'us-east-1',
    credentials: { accessKeyId: 'AKID', secretAccessKey: 'SECRET', sessionToken },
    transport: fake.transport,
    ...awsEndpoints(rules),
  })
  result.catch(() => {})
  return { fake, result }
}

const scope = (authorization: string | undefined) =>
  /Credential=AKID\/\d{8}\/([^/]+\/[^/]+)\//.exec(authorization ?? '')?.[1]

describe('awsEndpoints() in the engine', () => {
  it('sends to the host the rules choose and signs for its region and service', async () => {
    const { fake, result } = start('arn:aws:s3:eu-west-3:123456789012:accesspoint/uploads', {
      useDualstackEndpoint: true,
    })
    const [put] = await fake.waitForPending()
    expect(put!.url).toBe(
      'https://uploads-123456789012.s3-accesspoint.dualstack.eu-west-3.amazonaws.com/photos/a%20b.jpg',
    )
    expect(scope(put!.headers?.authorization)).toBe('eu-west-3/s3')
    put!.respond(200, { etag: '"e1"' })
    await expect(result).resolves.toMatchObject({ url: put!.url, etag: '"e1"' })
  })

  it('follows a 301 to the region it names: the new host, signed for it, and the result says where the object is', async () => {
    const { fake, result } = start('holiday-photos')
    const [first] = await fake.waitForPending()
    expect(first!.url).toBe('https://holiday-photos.s3.us-east-1.amazonaws.com/photos/a%20b.jpg')
    first!.respond(
      301,
      { 'x-amz-bucket-region': 'ap-south-1' },
      xml.error('PermanentRedirect', 'addressed using the specified endpoint'),
    )
    const [second] = await fake.waitForPending()
    expect(second!.url).toBe('https://holiday-photos.s3.ap-south-1.amazonaws.com/photos/a%20b.jpg')
    expect(scope(second!.headers?.authorization)).toBe('ap-south-1/s3')
    second!.respond(200, { etag: '"e2"' })
    await expect(result).resolves.toMatchObject({ url: second!.url, etag: '"e2"' })
    expect(fake.log).toEqual(['PUT', 'PUT'])
  })

  it('a second refusal after moving is final: no loop between regions', async () => {
    const { fake, result } = start('holiday-photos')
    ;(await fake.waitForPending())[0]!.respond(
      301,
      { 'x-amz-bucket-region': 'ap-south-1' },
      xml.error('PermanentRedirect'),
    )
    ;(await fake.waitForPending())[0]!.respond(
      301,
      { 'x-amz-bucket-region': 'eu-north-1' },
      xml.error('PermanentRedirect'),
    )
    await expect(result).rejects.toMatchObject({ code: 'PermanentRedirect', status: 301 })
    expect(fake.log).toEqual(['PUT', 'PUT'])
  })

  it('directory buckets: CreateSession on the zonal endpoint first, then requests signed with the session', async () => {
    const { fake, result } = start('logs--use1-az4--x-s3', {}, undefined, 'STS-TOKEN')
    const [create] = await fake.waitForPending()
    expect(create!.method).toBe('GET')
    expect(create!.url).toBe('https://logs--use1-az4--x-s3.s3express-use1-az4.us-east-1.amazonaws.com/?session')
    expect(scope(create!.headers?.authorization)).toBe('us-east-1/s3express')
    // The caller's STS token goes as usual on CreateSession, signed.
    expect(create!.headers?.['x-amz-security-token']).toBe('STS-TOKEN')
    expect(create!.headers?.authorization).toMatch(/SignedHeaders=[^,]*x-amz-security-token/)
    create!.respond(200, {}, session('SESSIONKEY', 'SESSION-TOKEN'))
    const [put] = await fake.waitForPending()
    expect(put!.url).toBe('https://logs--use1-az4--x-s3.s3express-use1-az4.us-east-1.amazonaws.com/photos/a%20b.jpg')
    expect(put!.headers?.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=SESSIONKEY\/\d{8}\/us-east-1\/s3express\/aws4_request/,
    )
    expect(put!.headers?.['x-amz-s3session-token']).toBe('SESSION-TOKEN')
    expect(put!.headers?.authorization).toMatch(/SignedHeaders=[^,]*x-amz-s3session-token/)
    expect(put!.headers).not.toHaveProperty('x-amz-security-token')
    put!.respond(200, { etag: '"e3"' })
    await expect(result).resolves.toMatchObject({ etag: '"e3"' })
    expect(fake.log).toEqual(['GET ?session', 'PUT'])
  })

  it('directory buckets: a CreateSession reply without credentials fails the upload with an UploadError', async () => {
    const { fake, result } = start('empty--use1-az4--x-s3')
    ;(await fake.waitForPending())[0]!.respond(
      200,
      {},
      '<CreateSessionResult><Credentials></Credentials></CreateSessionResult>',
    )
    await expect(result).rejects.toThrow(/CreateSession on empty--use1-az4--x-s3 answered without complete Credentials/)
    expect(fake.log).toEqual(['GET ?session'])
  })

  it('directory buckets: the session serves later uploads until a minute before it expires', async () => {
    const fake = stepThroughTransport()
    for (const [bucket, lifetime, expected] of [
      ['lasting--use1-az4--x-s3', 300_000, ['GET ?session', 'PUT', 'PUT']],
      ['short--use1-az4--x-s3', 59_000, ['GET ?session', 'PUT', 'GET ?session', 'PUT']],
    ] as const) {
      fake.log.length = 0
      for (const n of [1, 2]) {
        const { result } = start(bucket, {}, fake)
        const [first] = await fake.waitForPending()
        if (first!.step === 'GET ?session') {
          first!.respond(200, {}, session('SESSIONKEY', `T${n}`, lifetime))
          ;(await fake.waitForPending())[0]!.respond(200, { etag: '"e"' })
        } else first!.respond(200, { etag: '"e"' })
        await result
      }
      expect(fake.log).toEqual(expected)
    }
  })

  it('directory buckets: a request refused as expired gets a new session once; a second refusal is final', async () => {
    const { fake, result } = start('expiring--use1-az4--x-s3')
    const expired = xml.error('ExpiredToken', 'The provided token has expired')
    ;(await fake.waitForPending())[0]!.respond(200, {}, session('SESSION1', 'T1'))
    ;(await fake.waitForPending())[0]!.respond(403, {}, expired)
    ;(await fake.waitForPending())[0]!.respond(200, {}, session('SESSION2', 'T2'))
    const [again] = await fake.waitForPending()
    expect(again!.headers?.['x-amz-s3session-token']).toBe('T2')
    again!.respond(403, {}, expired)
    await expect(result).rejects.toMatchObject({ status: 403, code: 'ExpiredToken' })
    expect(fake.log).toEqual(['GET ?session', 'PUT', 'GET ?session', 'PUT'])
  })

  it('directory buckets still refuse what the zonal endpoints cannot do, before any request', async () => {
    const { fake, result } = start('logs--use1-az4--x-s3', { useDualstackEndpoint: true })
    await expect(result).rejects.toThrow(EndpointRuleError)
    expect(fake.log).toEqual([])
  })
})

const session = (accessKeyId: string, token: string, lifetime = 300_000) =>
  `<CreateSessionResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Credentials><SessionToken>${token}</SessionToken><SecretAccessKey>SESSIONSECRET</SecretAccessKey><AccessKeyId>${accessKeyId}</AccessKeyId><Expiration>${new Date(Date.now() + lifetime).toISOString()}</Expiration></Credentials></CreateSessionResult>`
