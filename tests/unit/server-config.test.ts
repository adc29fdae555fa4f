// Configuration: explicit config over the S3_UPLOAD_* environment, every missing setting named
// at once and when the handler is created, and the defaults.
import { afterEach, describe, expect, it, vi } from 'vitest'
import { MIN_PART_SIZE } from '../../protocol/limits.ts'
import { configFromEnv, resolveConfig } from '../../server/config.ts'
import { createUploadHandler } from '../../server/index.ts'

const FULL_ENV = {
  S3_UPLOAD_KEY: 'AKID',
  S3_UPLOAD_SECRET: 'SECRET',
  S3_UPLOAD_BUCKET: 'uploads',
  S3_UPLOAD_REGION: 'eu-central-1',
}

afterEach(() => {
  vi.unstubAllEnvs()
  vi.restoreAllMocks()
})

describe('configFromEnv', () => {
  it('reads every S3_UPLOAD_* setting', () => {
    expect(
      configFromEnv({
        ...FULL_ENV,
        S3_UPLOAD_ENDPOINT: 'http://127.0.0.1:7480',
        S3_UPLOAD_FORCE_PATH_STYLE: 'true',
        S3_UPLOAD_STS_ENDPOINT: 'http://127.0.0.1:7481',
        S3_UPLOAD_STS_MODE: 'assume-role',
        S3_UPLOAD_ROLE_ARN: 'arn:aws:iam:::role/uploader',
        S3_UPLOAD_TICKET_SECRET: 'ticket',
      }),
    ).toEqual({
      accessKeyId: 'AKID',
      secretAccessKey: 'SECRET',
      bucket: 'uploads',
      region: 'eu-central-1',
      endpoint: 'http://127.0.0.1:7480',
      forcePathStyle: true,
      sts: { mode: 'assume-role', endpoint: 'http://127.0.0.1:7481', roleArn: 'arn:aws:iam:::role/uploader' },
      ticketSecret: 'ticket',
    })
  })

  it.each(['1', 'true', 'TRUE', 'yes'])('S3_UPLOAD_FORCE_PATH_STYLE=%s turns path style on', (value) => {
    expect(configFromEnv({ S3_UPLOAD_FORCE_PATH_STYLE: value }).forcePathStyle).toBe(true)
  })

  it('refuses an unknown S3_UPLOAD_STS_MODE', () => {
    expect(() => configFromEnv({ S3_UPLOAD_STS_MODE: 'oidc' })).toThrow(
      "updraft: S3_UPLOAD_STS_MODE must be 'federation' or 'assume-role', got 'oidc'",
    )
  })
})

describe('resolveConfig', () => {
  it('names every missing setting in one error', () => {
    expect(() => resolveConfig({}, {})).toThrow(
      "updraft: missing settings: bucket (S3_UPLOAD_BUCKET), region (S3_UPLOAD_REGION), a static key (S3_UPLOAD_KEY and S3_UPLOAD_SECRET) or, with credentials from the AWS SDK's chain, ticketSecret (S3_UPLOAD_TICKET_SECRET)",
    )
  })

  it('counts an empty string as missing, in the config and in the environment', () => {
    expect(() => resolveConfig({ bucket: '' }, { ...FULL_ENV, S3_UPLOAD_BUCKET: '', S3_UPLOAD_REGION: '' })).toThrow(
      'updraft: missing settings: bucket (S3_UPLOAD_BUCKET), region (S3_UPLOAD_REGION)',
    )
  })

  it('takes the config first and fills the rest from the environment', () => {
    const resolved = resolveConfig({ bucket: 'mine', endpoint: 'http://s3.local' }, FULL_ENV)
    expect(resolved).toMatchObject({
      credentials: { accessKeyId: 'AKID', secretAccessKey: 'SECRET' },
      staticKey: true,
      bucket: 'mine',
      region: 'eu-central-1',
      endpoint: 'http://s3.local',
    })
  })

  it('has the documented defaults', () => {
    const resolved = resolveConfig({}, FULL_ENV)
    expect(resolved).toMatchObject({
      forcePathStyle: false,
      sts: { mode: 'federation', endpoint: undefined },
      multipartThreshold: MIN_PART_SIZE,
      partSize: MIN_PART_SIZE,
      ticketTtlSeconds: 86_400,
    })
    expect(resolved.endpoint).toBeUndefined()
  })

  it('needs a role for assume-role, and asks STS at the storage endpoint unless told otherwise', () => {
    expect(() => resolveConfig({ sts: { mode: 'assume-role' } }, FULL_ENV)).toThrow(
      'updraft: missing settings: sts.roleArn (S3_UPLOAD_ROLE_ARN)',
    )
    const onRgw = resolveConfig(
      { endpoint: 'http://rgw:7480', sts: { mode: 'assume-role', roleArn: 'arn:r' } },
      FULL_ENV,
    )
    expect(onRgw.sts).toEqual({
      mode: 'assume-role',
      roleArn: 'arn:r',
      endpoint: 'http://rgw:7480',
      policyVariables: false,
    })
    const elsewhere = resolveConfig(
      { endpoint: 'http://rgw:7480', sts: { mode: 'assume-role', roleArn: 'arn:r', endpoint: 'https://sts.example' } },
      FULL_ENV,
    )
    expect(elsewhere.sts.endpoint).toBe('https://sts.example')
    // Federation is AWS's alone: never sent to a custom storage endpoint.
    expect(resolveConfig({ endpoint: 'http://rgw:7480' }, FULL_ENV).sts.endpoint).toBeUndefined()
  })

  it.each([
    [{ multipartThreshold: -1 }, 'updraft: multipartThreshold must be a whole number of at least 0, got -1'],
    [{ partSize: 1024 }, 'updraft: partSize must be a whole number of at least 5242880, got 1024'],
    [{ maxFileSize: 1.5 }, 'updraft: maxFileSize must be a whole number of at least 0, got 1.5'],
    [{ ticketTtlSeconds: 0 }, 'updraft: ticketTtlSeconds must be a whole number of at least 1, got 0'],
    [{ sts: { mode: 'saml' as 'federation' } }, "updraft: sts.mode must be 'federation' or 'assume-role', got 'saml'"],
  ])('refuses %j', (config, message) => {
    expect(() => resolveConfig(config, FULL_ENV)).toThrow(message)
  })
})

describe('createUploadHandler', () => {
  it('fails when it is created, not on the first upload', () => {
    for (const name of Object.keys(FULL_ENV)) vi.stubEnv(name, '')
    expect(() => createUploadHandler()).toThrow(
      /^updraft: missing settings: bucket \(S3_UPLOAD_BUCKET\), region \(S3_UPLOAD_REGION\), a static key/,
    )
  })

  it('reads process.env when given no config', () => {
    for (const [name, value] of Object.entries(FULL_ENV)) vi.stubEnv(name, value)
    expect(createUploadHandler()).toBeTypeOf('function')
  })

  it('logs to console.error by default, without the secret', async () => {
    const consoleError = vi.spyOn(console, 'error').mockImplementation(() => {})
    const handler = createUploadHandler({
      ...configFromEnv(FULL_ENV),
      key: () => {
        throw new Error('key store offline')
      },
    })
    const response = await handler(
      new Request('http://app.test/api/s3-upload', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"filename":"a","filetype":""}',
      }),
    )
    expect(response.status).toBe(500)
    expect(consoleError).toHaveBeenCalledOnce()
    expect(consoleError.mock.calls[0]).toEqual([
      'updraft: upload API failed',
      expect.objectContaining({ err: expect.objectContaining({ message: 'key store offline' }) }),
    ])
    expect(JSON.stringify(consoleError.mock.calls)).not.toContain('SECRET')
  })
})
