// server/session-signer.ts: the cached session credential that signs presigned URLs (issue 10,
// finding 1). One STS call serves every request until the credential has 30 minutes left; no URL
// claims to live longer than the credential that signed it; a failed renewal falls back to a
// credential still good for a while, and otherwise fails the request.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { resolveConfig } from '../../server/config.ts'
import { createSessionSigner } from '../../server/session-signer.ts'
import type { IssueCredentials } from '../../server/sts.ts'

const HOUR = 3600 * 1000
const T0 = Date.UTC(2026, 0, 1)
const errors: object[] = []
const config = resolveConfig({
  accessKeyId: 'AKIDSERVER',
  secretAccessKey: 'server-secret',
  bucket: 'uploads',
  region: 'us-east-1',
  endpoint: 'http://127.0.0.1:9',
  sts: { mode: 'assume-role', roleArn: 'arn:aws:iam:::role/uploader' },
  // Named, so no preflight check runs (that fallback: tests/unit/presign-preflight.test.ts).
  presignWith: 'session',
  logger: { error: (obj) => void errors.push(obj) },
})

/** An STS stand-in in memory: credentials valid for an hour from "now", numbered by call. */
function fakeSts() {
  const calls: Array<{ policy: string; name: string; duration: number }> = []
  let failing = false
  const issue: IssueCredentials = async (policy, name, duration) => {
    calls.push({ policy, name, duration })
    if (failing) throw new Error('STS unavailable')
    return {
      AccessKeyId: `ASIA${calls.length}`,
      SecretAccessKey: 'session-secret',
      SessionToken: `token-${calls.length}`,
      Expiration: new Date(Date.now() + HOUR),
    }
  }
  return { calls, issue, fail: (value: boolean) => void (failing = value) }
}

const sign = async (presign: Awaited<ReturnType<ReturnType<typeof createSessionSigner>>>) =>
  new URL(await presign({ method: 'PUT', url: 'http://127.0.0.1:9/uploads/next-s3-uploads/a', expiresIn: 3600 }))
    .searchParams

beforeEach(() => {
  vi.useFakeTimers()
  vi.setSystemTime(T0)
  errors.length = 0
})
afterEach(() => vi.useRealTimers())

describe('createSessionSigner', () => {
  it('asks STS once for every caller, with the upload-prefix policy, and signs with the session', async () => {
    const sts = fakeSts()
    const signer = createSessionSigner(config, sts.issue)
    const presigners = await Promise.all([signer(), signer(), signer()])
    expect(sts.calls).toEqual([
      {
        policy:
          '{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["s3:PutObject","s3:AbortMultipartUpload"],"Resource":["arn:aws:s3:::uploads/next-s3-uploads/*"]}]}',
        name: 'S3UploadPresigner',
        duration: 3600,
      },
    ])
    const query = await sign(presigners[0]!)
    expect(query.get('X-Amz-Credential')).toMatch(/^ASIA1\//)
    expect(query.get('X-Amz-Security-Token')).toBe('token-1')
  })

  it('cuts a URL to what the credential has left, and renews once less than 30 minutes are left', async () => {
    const sts = fakeSts()
    const signer = createSessionSigner(config, sts.issue)
    expect((await sign(await signer())).get('X-Amz-Expires')).toBe('3600')
    vi.setSystemTime(T0 + 20 * 60 * 1000)
    expect((await sign(await signer())).get('X-Amz-Expires')).toBe(String(40 * 60))
    expect(sts.calls).toHaveLength(1)
    vi.setSystemTime(T0 + 31 * 60 * 1000)
    const renewed = await sign(await signer())
    expect(sts.calls).toHaveLength(2)
    expect(renewed.get('X-Amz-Credential')).toMatch(/^ASIA2\//)
    expect(renewed.get('X-Amz-Expires')).toBe('3600')
  })

  it('a failed renewal keeps signing with a credential that still has over 5 minutes, logged; with none, the request fails', async () => {
    const sts = fakeSts()
    const signer = createSessionSigner(config, sts.issue)
    await signer()
    sts.fail(true)
    vi.setSystemTime(T0 + 40 * 60 * 1000)
    expect((await sign(await signer())).get('X-Amz-Credential')).toMatch(/^ASIA1\//)
    expect(errors).toEqual([expect.objectContaining({ err: expect.objectContaining({ message: 'STS unavailable' }) })])
    vi.setSystemTime(T0 + 56 * 60 * 1000)
    await expect(signer()).rejects.toThrow('STS unavailable')
    sts.fail(false)
    expect((await sign(await signer())).get('X-Amz-Credential')).toMatch(/^ASIA\d\//)
  })

  it('presignWith server-key signs with the server key, no STS call', async () => {
    const sts = fakeSts()
    const signer = createSessionSigner({ ...config, presignWith: 'server-key' }, sts.issue)
    const query = await sign(await signer())
    expect(query.get('X-Amz-Credential')).toMatch(/^AKIDSERVER\//)
    expect(query.has('X-Amz-Security-Token')).toBe(false)
    expect(sts.calls).toEqual([])
  })
})
