// server/directory-signer.ts: presigning for a directory bucket with CreateSession sessions of
// the server's own credentials. One CreateSession serves every request in flight and after, until
// the session has a minute left; URLs are signed as s3express with X-Amz-S3session-Token and
// never outlive their session. CreateSession goes through the server's S3 client: here an
// in-memory client answering it (the HTTP flow is tests/server-directory-buckets.test.ts). The
// URL is held to getSignedUrl's for the same session (the SDK's S3 Express presigning).
import { S3Client, UploadPartCommand } from '@aws-sdk/client-s3'
import { getSignedUrl } from '@aws-sdk/s3-request-presigner'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { resolveConfig } from '../../server/config.ts'
import { serverInfo } from '../../server/info.ts'
import { createPresigner } from '../../server/presigner.ts'
import { createSessionSigner } from '../../server/session-signer.ts'
import { storageObjectUrl } from '../../server/storage.ts'

const T0 = Date.UTC(2026, 0, 1)
const FIVE_MINUTES = 5 * 60_000
const BUCKET = 'uploads--use1-az4--x-s3'
const config = resolveConfig({
  accessKeyId: 'AKIDSERVER',
  secretAccessKey: 'server-secret',
  bucket: BUCKET,
  region: 'us-east-1',
  logger: { error: () => {} },
})

function sessionClient() {
  const calls: string[] = []
  const client = {
    async send(command: { constructor: { name: string }; input: { Bucket: string } }) {
      calls.push(`${command.constructor.name} ${command.input.Bucket}`)
      // A reply that takes a turn of the event loop, so requests overlap it.
      await new Promise<void>((resolve) => setTimeout(resolve, 0))
      const n = calls.length
      return {
        Credentials: {
          AccessKeyId: `SESSION${n}`,
          SecretAccessKey: `secret-${n}`,
          SessionToken: `token-${n}`,
          Expiration: new Date(Date.now() + FIVE_MINUTES),
        },
      }
    },
  }
  return { calls, client: client as unknown as S3Client }
}

const url = storageObjectUrl({ bucket: BUCKET, key: 'k/a.bin', region: 'us-east-1' })
const request = { method: 'PUT', url, expiresIn: 3600 }

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] })
  vi.setSystemTime(T0)
})
afterEach(() => vi.useRealTimers())

describe('presigning for a directory bucket', () => {
  it('addresses the zonal endpoint', () => {
    expect(url).toBe('https://uploads--use1-az4--x-s3.s3express-use1-az4.us-east-1.amazonaws.com/k/a.bin')
  })

  it('signs as s3express with the session, its token as X-Amz-S3session-Token, whatever presignWith says', async () => {
    const { calls, client } = sessionClient()
    const signer = createSessionSigner(config, undefined, client)
    const signed = new URL(await (await signer())(request))
    expect(calls).toEqual([`CreateSessionCommand ${BUCKET}`])
    expect(signed.searchParams.get('X-Amz-Credential')).toBe('SESSION1/20260101/us-east-1/s3express/aws4_request')
    expect(signed.searchParams.get('X-Amz-S3session-Token')).toBe('token-1')
    expect(signed.searchParams.has('X-Amz-Security-Token')).toBe(false)
  })

  it('shares one CreateSession among requests in flight, and keeps it until a minute before it expires', async () => {
    const { calls, client } = sessionClient()
    const signer = createSessionSigner(config, undefined, client)
    await Promise.all([signer(), signer(), signer()])
    expect(calls).toHaveLength(1)
    vi.setSystemTime(T0 + FIVE_MINUTES - 60_000 - 1)
    await signer()
    expect(calls).toHaveLength(1)
    vi.setSystemTime(T0 + FIVE_MINUTES - 60_000)
    const renewed = new URL(await (await signer())(request))
    expect(calls).toHaveLength(2)
    expect(renewed.searchParams.get('X-Amz-S3session-Token')).toBe('token-2')
  })

  it('cuts every URL to what its session has left', async () => {
    const { client } = sessionClient()
    const presign = await createSessionSigner(config, undefined, client)()
    expect(new URL(await presign(request)).searchParams.get('X-Amz-Expires')).toBe('300')
    expect(new URL(await presign({ ...request, date: new Date(T0 + 200_000) })).searchParams.get('X-Amz-Expires')).toBe(
      '100',
    )
    await expect(presign({ ...request, date: new Date(T0 + FIVE_MINUTES) })).rejects.toThrow(/session has expired/)
  })

  it('refuses at startup a directory bucket on AWS configured path-style (zonal endpoints are virtual-hosted only)', () => {
    const { client } = sessionClient()
    expect(() => createSessionSigner(resolveConfig({ ...config, forcePathStyle: true }), undefined, client)).toThrow(
      /directory buckets .* virtual-hosted zonal URLs only/,
    )
  })

  it('the upload API offers no token mode for a directory bucket, and says why', () => {
    const info = serverInfo(
      resolveConfig({ ...config, sts: { mode: 'assume-role', roleArn: 'arn:aws:iam:::role/uploader' } }),
    )
    expect(info.token).toBe(false)
    expect(info.tokenUnavailableReason).toMatch(/directory bucket .* could write any key/)
  })
})

describe("a directory-bucket URL equals the AWS SDK's (SignatureV4S3Express) for the same session", () => {
  it('UploadPart on a zonal endpoint, character for character', async () => {
    vi.useRealTimers()
    const session = {
      accessKeyId: 'SESSIONKEY',
      secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
      sessionToken: 'IQoJb3JpZ2lu+/=session',
    }
    const date = new Date('2024-02-29T23:59:58Z')
    const client = new S3Client({
      region: 'us-west-2',
      credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'unused' },
      requestChecksumCalculation: 'WHEN_REQUIRED',
      // The SDK's own session, given rather than fetched with CreateSession.
      s3ExpressIdentityProvider: {
        getS3ExpressIdentity: async () => ({ ...session, expiration: new Date(Date.now() + FIVE_MINUTES) }),
      },
    })
    const key = "uploads/ünï cödé/!'()*.bin"
    const expected = await getSignedUrl(
      client,
      new UploadPartCommand({
        Bucket: 'mybucket--usw2-az1--x-s3',
        Key: key,
        UploadId: 'upload+/=id',
        PartNumber: 7,
        ContentLength: 5242880,
      }),
      { expiresIn: 300, signingDate: date },
    )
    client.destroy()
    const actual = await createPresigner(session, 'us-west-2', { directorySession: true })({
      method: 'PUT',
      url: storageObjectUrl({ bucket: 'mybucket--usw2-az1--x-s3', key, region: 'us-west-2' }),
      query: { partNumber: '7', uploadId: 'upload+/=id', 'x-id': 'UploadPart' },
      headers: { 'content-length': '5242880' },
      expiresIn: 300,
      date,
    })
    expect(actual).toBe(expected)
    const query = new URL(actual).searchParams
    expect(query.get('X-Amz-S3session-Token')).toBe(session.sessionToken)
    expect(query.get('X-Amz-Credential')).toBe('SESSIONKEY/20240229/us-west-2/s3express/aws4_request')
    expect(query.get('X-Amz-SignedHeaders')).toBe('content-length;host')
  })
})
