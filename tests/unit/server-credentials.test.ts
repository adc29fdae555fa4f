import { describe, expect, it } from 'vitest'
import { credentialsFinding } from '../../cli/doctor.ts'
import { resolveConfig } from '../../server/config.ts'
import { credentialSource, serverKeySigner } from '../../server/credentials.ts'

const ENV = { S3_UPLOAD_BUCKET: 'uploads', S3_UPLOAD_REGION: 'us-east-1' }
const request = { method: 'PUT', url: 'https://uploads.s3.us-east-1.amazonaws.com/k', expiresIn: 3600 }

describe("the server's credentials", () => {
  it('a URL signed with temporary credentials expires with them, not an hour later', async () => {
    const expiration = new Date(Date.now() + 120_000)
    const presign = await serverKeySigner('us-east-1', async () => ({
      accessKeyId: 'ASIA',
      secretAccessKey: 's',
      sessionToken: 't',
      expiration,
    }))()
    const url = new URL(await presign({ ...request, date: new Date(expiration.getTime() - 120_000) }))
    expect(url.searchParams.get('X-Amz-Expires')).toBe('120')
    expect(url.searchParams.get('X-Amz-Security-Token')).toBe('t')
    await expect(presign({ ...request, date: expiration })).rejects.toThrow(
      'updraft: the server credentials have expired and were not renewed',
    )
  })

  it('a static key signs for as long as asked', async () => {
    const presign = await serverKeySigner('us-east-1', async () => ({ accessKeyId: 'AKIA', secretAccessKey: 's' }))()
    expect(new URL(await presign(request)).searchParams.get('X-Amz-Expires')).toBe('3600')
  })

  it('a provider needs a ticketSecret; a static key, as config or as credentials, derives one', () => {
    expect(() =>
      resolveConfig(
        { credentials: async () => ({ accessKeyId: 'ASIA', secretAccessKey: 's', sessionToken: 't' }) },
        ENV,
      ),
    ).toThrow(
      'updraft: missing settings: ticketSecret (S3_UPLOAD_TICKET_SECRET), as the credentials are not a static key: tickets must outlive them, on every instance',
    )
    const fromKeys = resolveConfig({ accessKeyId: 'AKIA', secretAccessKey: 's' }, ENV)
    const fromObject = resolveConfig({ credentials: { accessKeyId: 'AKIA', secretAccessKey: 's' } }, ENV)
    expect(fromObject.ticketSecret).toBe(fromKeys.ticketSecret)
    expect(fromObject.staticKey && fromKeys.staticKey).toBe(true)
    expect(resolveConfig({ ticketSecret: 'shared' }, ENV)).toMatchObject({
      credentials: undefined,
      staticKey: false,
      ticketSecret: 'shared',
    })
  })

  it('refuses half a key, and a key beside credentials', () => {
    expect(() => resolveConfig({ accessKeyId: 'AKIA' }, ENV)).toThrow(
      'secretAccessKey (S3_UPLOAD_SECRET), as accessKeyId is set',
    )
    expect(() =>
      resolveConfig(
        {
          accessKeyId: 'AKIA',
          secretAccessKey: 's',
          credentials: async () => ({ accessKeyId: 'x', secretAccessKey: 'y' }),
        },
        ENV,
      ),
    ).toThrow(
      'updraft: set either a static key (accessKeyId and secretAccessKey, or S3_UPLOAD_KEY and S3_UPLOAD_SECRET) or credentials, not both',
    )
  })

  it('doctor says where credentials came from and until when, and that federation cannot use temporary ones', () => {
    const config = resolveConfig({ ticketSecret: 'shared' }, ENV)
    const expiration = new Date('2026-11-26T12:00:00Z')
    const fromContainer = {
      accessKeyId: 'ASIAEXAMPLE',
      secretAccessKey: 's',
      sessionToken: 't',
      expiration,
      $source: { CREDENTIALS_HTTP: 'z' },
    }
    expect(credentialSource(fromContainer)).toMatch(/^the container credentials endpoint/)
    const finding = credentialsFinding(config, { credentials: fromContainer })
    expect(finding).toMatchObject({ check: 'credentials', status: 'warn' })
    expect(finding.summary).toBe(
      'key ASIA… from the container credentials endpoint (AWS_CONTAINER_CREDENTIALS_FULL_URI or _RELATIVE_URI: ECS, EKS Pod Identity, Lambda), temporary, valid until 2026-11-26T12:00:00.000Z (renewed before then); token mode cannot work with them',
    )
    expect(finding.fix).toMatch(/^token mode's GetFederationToken needs an IAM user's long-term key/)
    const assumeRole = resolveConfig(
      { ticketSecret: 'shared', sts: { mode: 'assume-role', roleArn: 'arn:aws:iam::1:role/uploader' } },
      ENV,
    )
    expect(credentialsFinding(assumeRole, { credentials: fromContainer }).status).toBe('ok')
    expect(
      credentialsFinding(config, { error: new Error('Could not load credentials from any providers') }),
    ).toMatchObject({ status: 'fail' })
  })
})
