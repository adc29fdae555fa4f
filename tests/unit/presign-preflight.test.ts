// Issue 25: Ceph RGW 16.2 refuses the browser's CORS preflight for URLs signed by an STS session.
// The diagnosis (server/preflight-check.ts, cli/presign-check.ts), the default's fallback to the
// server key (server/session-signer.ts) and the settings that decide it (server/config.ts).
import { describe, expect, it } from 'vitest'
import { diagnosePresignPreflight } from '../../cli/presign-check.ts'
import { resolveConfig, type UploadHandlerConfig } from '../../server/config.ts'
import { type PreflightReply, refusesSessionPreflight } from '../../server/preflight-check.ts'
import { createSessionSigner } from '../../server/session-signer.ts'
import type { IssueCredentials } from '../../server/sts.ts'

const ORIGIN = 'https://app.example.test'
const OK: PreflightReply = { status: 200, allowOrigin: ORIGIN }
const SIGNATURE: PreflightReply = { status: 403, code: 'SignatureDoesNotMatch', allowOrigin: null }
const CORS: PreflightReply = { status: 403, code: 'AccessForbidden', allowOrigin: null }
const base: UploadHandlerConfig = {
  accessKeyId: 'AKIDSERVER',
  secretAccessKey: 'server-secret',
  bucket: 'uploads',
  region: 'us-east-1',
}
const rgw: UploadHandlerConfig = {
  ...base,
  endpoint: 'http://127.0.0.1:9',
  forcePathStyle: true,
  sts: { mode: 'assume-role', roleArn: 'arn:aws:iam:::role/uploader' },
}

describe('refusesSessionPreflight', () => {
  it('is true only when the session is refused for its signature where the server key is not', () => {
    expect(refusesSessionPreflight(SIGNATURE, OK)).toBe(true)
    expect(refusesSessionPreflight(SIGNATURE, CORS)).toBe(true)
    expect(refusesSessionPreflight({ status: 403, code: 'AccessDenied', allowOrigin: null }, OK)).toBe(true)
    expect(refusesSessionPreflight(OK, OK)).toBe(false)
    // A CORS rule refusing the origin refuses both: nothing about the signer.
    expect(refusesSessionPreflight(CORS, CORS)).toBe(false)
    expect(refusesSessionPreflight(SIGNATURE, SIGNATURE)).toBe(false)
  })
})

describe('resolveConfig: presignFallback', () => {
  it('is on only for the default on a store other than AWS that has an STS', () => {
    expect(resolveConfig(rgw, {})).toMatchObject({ presignWith: 'session', presignFallback: true })
    expect(resolveConfig({ ...rgw, presignWith: 'session' }, {})).toMatchObject({
      presignWith: 'session',
      presignFallback: false,
    })
    expect(resolveConfig({ ...rgw, presignWith: 'server-key' }, {})).toMatchObject({
      presignWith: 'server-key',
      presignFallback: false,
    })
    expect(resolveConfig(base, {})).toMatchObject({ presignWith: 'session', presignFallback: false }) // AWS
    expect(resolveConfig({ ...base, endpoint: 'http://127.0.0.1:9' }, {})).toMatchObject({
      presignWith: 'server-key',
      presignFallback: false,
    }) // no STS
  })

  it('reads S3_UPLOAD_PRESIGN_WITH, and names it when its value is wrong', () => {
    expect(resolveConfig(rgw, { S3_UPLOAD_PRESIGN_WITH: 'session' })).toMatchObject({
      presignWith: 'session',
      presignFallback: false,
    })
    expect(() => resolveConfig(rgw, { S3_UPLOAD_PRESIGN_WITH: 'key' })).toThrow(
      /presignWith must be 'session' or 'server-key', got 'key' \(presignWith or S3_UPLOAD_PRESIGN_WITH\)/,
    )
  })
})

describe("createSessionSigner: the default's preflight check", () => {
  const issue: IssueCredentials = async () => ({
    AccessKeyId: 'ASIASESSION',
    SecretAccessKey: 's',
    SessionToken: 'token',
    Expiration: new Date(Date.now() + 3600_000),
  })
  const credentialOf = async (signer: ReturnType<typeof createSessionSigner>) =>
    new URL(
      await (await signer())({ method: 'PUT', url: 'http://127.0.0.1:9/uploads/next-s3-uploads/a', expiresIn: 60 }),
    ).searchParams.get('X-Amz-Credential')!

  function setup(answer: (url: string) => PreflightReply | Error) {
    const warnings: string[] = []
    const checked: string[] = []
    const config = resolveConfig(
      { ...rgw, logger: { error: () => {}, warn: (_obj, msg) => void warnings.push(msg ?? '') } },
      {},
    )
    const signer = createSessionSigner(config, issue, undefined, async (url, origin, headers) => {
      checked.push(`${new URL(url).searchParams.get('X-Amz-Credential')!.split('/')[0]} ${origin} ${headers.join(',')}`)
      const reply = answer(url)
      if (reply instanceof Error) throw reply
      return reply
    })
    return { signer, warnings, checked }
  }
  const bySession = (url: string) => new URL(url).searchParams.has('X-Amz-Security-Token')

  it('signs with the server key once storage refuses the session URL’s preflight, checking once and warning once', async () => {
    const { signer, warnings, checked } = setup((url) => (bySession(url) ? SIGNATURE : OK))
    const credentials = await Promise.all([credentialOf(signer), credentialOf(signer), credentialOf(signer)])
    expect(credentials.map((c) => c.split('/')[0])).toEqual(['AKIDSERVER', 'AKIDSERVER', 'AKIDSERVER'])
    expect(checked).toEqual([
      'ASIASESSION https://updraft-preflight-check.invalid Cache-Control,Content-Type,x-amz-acl,x-amz-copy-source-range',
      'AKIDSERVER https://updraft-preflight-check.invalid Cache-Control,Content-Type,x-amz-acl,x-amz-copy-source-range',
    ])
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toMatch(
      /signed with the server's own key: storage answered the browser's CORS preflight for a URL signed by the STS session with 403 SignatureDoesNotMatch/,
    )
    expect(warnings[0]).toContain("presignWith: 'session' keeps the session signer")
  })

  it('keeps the session where storage allows its preflight', async () => {
    const { signer, warnings, checked } = setup(() => OK)
    expect((await credentialOf(signer)).split('/')[0]).toBe('ASIASESSION')
    expect((await credentialOf(signer)).split('/')[0]).toBe('ASIASESSION')
    expect(checked).toHaveLength(2) // one check: the session's URL and the key's
    expect(warnings).toEqual([])
  })

  it('storage out of reach: signs with the session, and checks again on the next request', async () => {
    let reachable = false
    const { signer, warnings, checked } = setup((url) =>
      !reachable ? new TypeError('fetch failed') : bySession(url) ? SIGNATURE : OK,
    )
    expect((await credentialOf(signer)).split('/')[0]).toBe('ASIASESSION')
    expect(warnings).toEqual([expect.stringMatching(/could not check how storage answers a preflight/)])
    reachable = true
    expect((await credentialOf(signer)).split('/')[0]).toBe('AKIDSERVER')
    expect(checked).toHaveLength(4)
  })
})

describe('diagnosePresignPreflight', () => {
  const explicit = resolveConfig({ ...rgw, presignWith: 'session' }, {})
  const fallback = resolveConfig(rgw, {})
  const CORS_FIX = 'aws s3api put-bucket-cors …'

  it("presignWith 'session' meeting RGW's refusal: fail, naming the failure and the fix", () => {
    const finding = diagnosePresignPreflight(
      explicit,
      ORIGIN,
      { signer: 'session', fallback: false, replies: [SIGNATURE, SIGNATURE], serverKeyReplies: [OK, OK] },
      CORS_FIX,
    )
    expect(finding.status).toBe('fail')
    expect(finding.summary).toContain('OPTIONS → 403 SignatureDoesNotMatch, no Access-Control-Allow-Origin')
    expect(finding.summary).toContain("With presignWith: 'session' every presigned upload from a page fails")
    expect(finding.fix).toMatch(
      /^Leave presignWith unset \(and S3_UPLOAD_PRESIGN_WITH\), so the upload API signs with the server's key on this store, or set presignWith: 'server-key'; then give that key only s3:PutObject/,
    )
  })

  it('the default meeting it: warn that the server key signs, and what that key must be', () => {
    const finding = diagnosePresignPreflight(
      fallback,
      ORIGIN,
      { signer: 'session', fallback: true, replies: [SIGNATURE, SIGNATURE], serverKeyReplies: [OK, OK] },
      CORS_FIX,
    )
    expect(finding.status).toBe('warn')
    expect(finding.summary).toContain("the upload API signs presigned URLs with the server's key on this store")
    expect(finding.fix).toMatch(
      /^Give the server's key only s3:PutObject, s3:AbortMultipartUpload, s3:GetObject, s3:DeleteObject on uploads\/next-s3-uploads\/\*/,
    )
  })

  it('a CORS rule refusing the origin, whoever signs: fail with the CORS fix, not the signer one', () => {
    const bothRefused = diagnosePresignPreflight(
      explicit,
      ORIGIN,
      { signer: 'session', fallback: false, replies: [CORS, CORS], serverKeyReplies: [CORS, CORS] },
      CORS_FIX,
    )
    expect(bothRefused).toMatchObject({ status: 'fail', fix: CORS_FIX })
    expect(bothRefused.summary).toContain(
      'for a URL signed by the STS session (403 AccessForbidden, no Access-Control-Allow-Origin)',
    )
    const fellBackToRefused = diagnosePresignPreflight(
      fallback,
      ORIGIN,
      { signer: 'session', fallback: true, replies: [SIGNATURE, SIGNATURE], serverKeyReplies: [CORS, CORS] },
      CORS_FIX,
    )
    expect(fellBackToRefused).toMatchObject({ status: 'fail', fix: CORS_FIX })
    const byKey = diagnosePresignPreflight(
      resolveConfig({ ...rgw, presignWith: 'server-key' }, {}),
      ORIGIN,
      { signer: 'server-key', fallback: false, replies: [OK, CORS] },
      CORS_FIX,
    )
    expect(byKey).toMatchObject({ status: 'fail', fix: CORS_FIX })
  })

  it('allowed: ok, naming the signer; an Access-Control-Allow-Origin for another origin is no allowance', () => {
    expect(
      diagnosePresignPreflight(
        explicit,
        ORIGIN,
        { signer: 'session', fallback: false, replies: [OK, OK], serverKeyReplies: [OK, OK] },
        CORS_FIX,
      ),
    ).toMatchObject({
      status: 'ok',
      summary: expect.stringContaining('signed by the STS session'),
    })
    const elsewhere = { status: 200, allowOrigin: 'https://other.example.test' }
    expect(
      diagnosePresignPreflight(
        explicit,
        ORIGIN,
        { signer: 'server-key', fallback: false, replies: [elsewhere, OK] },
        CORS_FIX,
      ).status,
    ).toBe('fail')
  })
})
