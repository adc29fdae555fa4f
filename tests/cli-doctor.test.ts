// `npx updraft-s3 doctor` and `npx updraft-s3 setup-bucket` (issue 9) against Ceph RGW, which has every
// bucket API, and s3rver, which lacks some: each finding as storage really answers it.
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import {
  CreateBucketCommand,
  GetBucketCorsCommand,
  PutBucketCorsCommand,
  PutBucketLifecycleConfigurationCommand,
  type S3Client,
} from '@aws-sdk/client-s3'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { clockFinding, type Finding, runDoctor } from '../cli/doctor.ts'
import { freePort } from '../dev/app-process.ts'
import { sdkClient } from '../dev/s3-client.ts'
import { type S3rverInstance, startS3rver } from '../dev/s3rver.ts'
import { storeConfig, type TestStore } from '../dev/stores.ts'
import { resolveConfig, type UploadHandlerConfig } from '../server/config.ts'
import { createUploadHandler } from '../server/handler.ts'
import { describeServerKeyPolicy, type KeyPolicy } from '../server/key-policy.ts'

const run = promisify(execFile)
const ORIGIN = 'https://app.example.test'

const statuses = (findings: Finding[]) => Object.fromEntries(findings.map(({ check, status }) => [check, status]))
const finding = (findings: Finding[], check: Finding['check']) => findings.find((f) => f.check === check)!
const doctor = (config: UploadHandlerConfig) => runDoctor(resolveConfig(config, {}), { origin: ORIGIN })

/** The `updraft-s3` command as the bin runs it, with only these S3_UPLOAD_* settings. */
async function cli(
  args: string[],
  config: UploadHandlerConfig,
  more: Record<string, string> = {},
): Promise<{ code: number; output: string }> {
  const env: Record<string, string> = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('S3_UPLOAD_')),
  ) as Record<string, string>
  const settings = {
    S3_UPLOAD_KEY: config.accessKeyId,
    S3_UPLOAD_SECRET: config.secretAccessKey,
    S3_UPLOAD_BUCKET: config.bucket,
    S3_UPLOAD_REGION: config.region,
    S3_UPLOAD_ENDPOINT: config.endpoint,
    S3_UPLOAD_FORCE_PATH_STYLE: config.forcePathStyle ? 'true' : undefined,
  }
  for (const [name, value] of Object.entries({ ...settings, ...more })) if (value !== undefined) env[name] = value
  return run(process.execPath, ['--import', 'tsx', 'cli/bin.ts', ...args], {
    env: env as NodeJS.ProcessEnv,
    timeout: 60_000,
  }).then(
    ({ stdout }) => ({ code: 0, output: stdout }),
    (error: { code: number; stdout: string }) => ({ code: error.code, output: error.stdout }),
  )
}

describe('on Ceph RGW', () => {
  const rgw = inject('rgw')
  let client: S3Client
  /** A fresh bucket with no CORS and no lifecycle rules, as a new user has. */
  let bare: TestStore

  beforeAll(async () => {
    client = sdkClient(rgw)
    bare = { ...rgw, bucket: `doctor-${Date.now()}` }
    await client.send(new CreateBucketCommand({ Bucket: bare.bucket }))
  })
  afterAll(() => client?.destroy())

  it('on a new bucket: access and clock pass; CORS, ExposeHeaders and the lifecycle rule fail with the commands that fix them', async () => {
    const findings = await doctor(storeConfig(bare))
    expect(statuses(findings)).toEqual({
      credentials: 'ok',
      access: 'ok',
      clock: 'ok',
      cors: 'fail',
      presign: 'fail', // the same missing CORS rule, met by a URL signed as the upload API signs
      'expose-etag': 'fail',
      lifecycle: 'fail',
      'least-privilege': 'warn', // the owner's key can list, and read and delete anywhere
      forms: 'ok', // RGW enforces POST policies
      sts: 'skip', // GetFederationToken on a custom endpoint
    })
    expect(finding(findings, 'cors').fix).toContain(
      `aws s3api put-bucket-cors --bucket ${bare.bucket} --cors-configuration file://cors.json --endpoint-url ${rgw.endpoint}`,
    )
    expect(finding(findings, 'cors').fix).toContain('MINIO_API_CORS_ALLOW_ORIGIN') // endpoint could be MinIO too
    expect(finding(findings, 'lifecycle').fix).toContain('"DaysAfterInitiation": 1')
    expect(finding(findings, 'least-privilege').summary).toMatch(
      /list the bucket, read objects outside keyPrefix, delete objects outside keyPrefix/,
    )
    expect(finding(findings, 'least-privilege').fix).toContain('"s3:AbortMultipartUpload"')
  })

  it('setup-bucket --dry-run shows the rules and changes nothing; setup-bucket --yes applies them and keeps the rules already there; then doctor passes them', async () => {
    const other = { AllowedOrigins: ['https://other.example.test'], AllowedMethods: ['GET'], AllowedHeaders: ['*'] }
    await client.send(new PutBucketCorsCommand({ Bucket: bare.bucket, CORSConfiguration: { CORSRules: [other] } }))

    const dry = await cli(['setup-bucket', '--origin', ORIGIN, '--dry-run'], storeConfig(bare))
    expect(dry.code).toBe(0)
    expect(dry.output).toContain('"ExposeHeaders"')
    expect(dry.output).toContain('"AbortIncompleteMultipartUpload"')
    // Issue 23: the rule covered the whole bucket ("Prefix": ""), not the upload API's keys.
    expect(dry.output).toContain('"Prefix": "next-s3-uploads/"')
    expect(dry.output).not.toContain('"Prefix": ""')
    // Added beside the rule already there, and it says so.
    expect(dry.output).toContain(`CORS rules: adding one for ${ORIGIN}, beside the 1 rule(s) already there, which stay`)
    expect(dry.output).toContain('Dry run: nothing was changed.')
    expect(statuses(await doctor(storeConfig(bare))).cors).toBe('fail')

    const noTerminal = await cli(['setup-bucket', '--origin', ORIGIN], storeConfig(bare))
    expect(noTerminal).toMatchObject({ code: 1, output: expect.stringContaining('Nothing was changed.') })

    const applied = await cli(['setup-bucket', '--origin', ORIGIN, '--yes'], storeConfig(bare))
    expect(applied.output).toContain('CORS rules: applied')
    expect(applied.output).toContain('Lifecycle rules: applied')
    expect(applied.code).toBe(0)

    const { CORSRules } = await client.send(new GetBucketCorsCommand({ Bucket: bare.bucket }))
    expect(CORSRules?.map((rule) => rule.AllowedOrigins)).toEqual([other.AllowedOrigins, [ORIGIN]])
    expect(statuses(await doctor(storeConfig(bare)))).toMatchObject({
      cors: 'ok',
      'expose-etag': 'ok',
      lifecycle: 'ok',
    })

    const again = await cli(['setup-bucket', '--origin', ORIGIN, '--yes'], storeConfig(bare))
    expect(again).toMatchObject({ code: 0, output: expect.stringContaining('Nothing to change.') })
  })

  it("doctor and setup-bucket agree that a lifecycle rule on the keys' prefix is enough", async () => {
    const scoped = { ...rgw, bucket: `doctor-scoped-${Date.now()}` }
    await client.send(new CreateBucketCommand({ Bucket: scoped.bucket }))
    const config = storeConfig(scoped, { keyPrefix: 'uploads/' })
    const rule = {
      ID: 'app-uploads',
      Status: 'Enabled' as const,
      Filter: { Prefix: 'uploads/' },
      AbortIncompleteMultipartUpload: { DaysAfterInitiation: 3 },
    }
    await client.send(
      new PutBucketLifecycleConfigurationCommand({ Bucket: scoped.bucket, LifecycleConfiguration: { Rules: [rule] } }),
    )

    expect(statuses(await doctor(config)).lifecycle).toBe('ok')
    const dry = await cli(['setup-bucket', '--origin', ORIGIN, '--key-prefix', 'uploads/', '--dry-run'], config)
    expect(dry.output).toContain('Lifecycle rules: unchanged')
    // A rule on another prefix does not cover these keys: both say so.
    const elsewhere = storeConfig(scoped, { keyPrefix: 'other/' })
    expect(statuses(await doctor(elsewhere)).lifecycle).toBe('fail')
    expect(
      (await cli(['setup-bucket', '--origin', ORIGIN, '--key-prefix', 'other/', '--dry-run'], elsewhere)).output,
    ).toContain('Lifecycle rules: adding one for keys under other/, beside the 1 rule(s) already there')
  })

  it('with assume-role settings, STS issues upload credentials', async () => {
    const findings = await doctor(storeConfig(rgw, { sts: { mode: 'assume-role', roleArn: rgw.roleArn } }))
    expect(finding(findings, 'sts')).toMatchObject({ status: 'ok', summary: expect.stringContaining('AssumeRole') })
  })

  it("with an STS and presignWith: 'session', the presign check meets RGW's refusal of the preflight and names it and the fix; the default, and 'server-key', pass it", async () => {
    const sts = { mode: 'assume-role' as const, roleArn: rgw.roleArn }
    const session = finding(await doctor(storeConfig(rgw, { sts, presignWith: 'session' })), 'presign')
    expect(session.status).toBe('fail')
    expect(session.summary).toContain(
      "refuses the browser's CORS preflight for URLs signed by the STS session (OPTIONS → 403 SignatureDoesNotMatch, no Access-Control-Allow-Origin)",
    )
    expect(session.fix).toContain(
      "Leave presignWith unset (and S3_UPLOAD_PRESIGN_WITH), so the upload API signs with the server's key on this store, or set presignWith: 'server-key'",
    )

    const byDefault = finding(await doctor(storeConfig(rgw, { sts })), 'presign')
    expect(byDefault.status).toBe('warn')
    expect(byDefault.summary).toContain("the upload API signs presigned URLs with the server's key on this store")
    expect(finding(await doctor(storeConfig(rgw, { sts, presignWith: 'server-key' })), 'presign').status).toBe('ok')

    // The command, with the settings as environment: FAIL, and exit 1.
    const { code, output } = await cli(['doctor', '--origin', ORIGIN], storeConfig(rgw), {
      S3_UPLOAD_STS_MODE: 'assume-role',
      S3_UPLOAD_ROLE_ARN: rgw.roleArn,
      S3_UPLOAD_PRESIGN_WITH: 'session',
    })
    expect(output).toMatch(
      /FAIL {2}presign +storage refuses the browser's CORS preflight for URLs signed by the STS session/,
    )
    expect(code).toBe(1)
  })

  it('the startup warning names exactly the policy the doctor prints (server/key-policy.ts)', async () => {
    const warnings: string[] = []
    const config = storeConfig(rgw, { logger: { error: () => {}, warn: (_obj, msg) => void warnings.push(msg ?? '') } })
    createUploadHandler(config)
    expect(warnings).toHaveLength(1)
    // RGW's user key may do anything: the least-privilege check warns and prints the policy.
    const fix = finding(await doctor(config), 'least-privilege').fix ?? ''
    const printed = JSON.parse(fix.slice(fix.indexOf('{'), fix.lastIndexOf('}') + 1)) as KeyPolicy
    expect(warnings[0]).toContain(`only ${describeServerKeyPolicy(printed)} `)
    const actions = printed.Statement.flatMap(({ Action }) => [Action].flat())
    expect(new Set(warnings[0]!.match(/\b(s3|sts|s3express):\w+/g))).toEqual(new Set(actions))
    expect(actions).toEqual([
      's3:PutObject',
      's3:AbortMultipartUpload',
      's3:GetObject',
      's3:DeleteObject',
      's3:ListBucketMultipartUploads',
    ])
  })

  it('a missing bucket, or a wrong secret, fails the access check and says what to change', async () => {
    const missing = await doctor(storeConfig(rgw, { bucket: 'no-such-bucket-here' }))
    expect(finding(missing, 'access')).toMatchObject({
      status: 'fail',
      summary: 'bucket "no-such-bucket-here" does not exist',
    })
    // A typo first, then the command that creates the bucket.
    expect(finding(missing, 'access').fix).toMatch(
      new RegExp(
        `^Check the spelling of S3_UPLOAD_BUCKET \\("no-such-bucket-here"\\)\\. If it is right, create the bucket:\\n.*aws s3api create-bucket --bucket no-such-bucket-here --endpoint-url ${rgw.endpoint}`,
        's',
      ),
    )
    expect(finding(missing, 'cors').status).toBe('skip')

    const wrongSecret = await doctor(storeConfig(rgw, { secretAccessKey: 'not-the-secret' }))
    expect(finding(wrongSecret, 'access').status).toBe('fail')
  })

  it('the command exits 1 when a check fails, printing each finding', async () => {
    const { code, output } = await cli(['doctor', '--origin', 'https://never-allowed.example.test'], storeConfig(bare))
    expect(code).toBe(1)
    expect(output).toMatch(/FAIL {2}cors/)
    expect(output).toMatch(/check\(s\) failed/)
  })
})

describe('on s3rver', () => {
  let s3: S3rverInstance
  beforeAll(async () => {
    s3 = await startS3rver()
  })
  afterAll(() => s3?.stop())

  it('passes CORS and ExposeHeaders (its bucket allows any origin) and warns that it cannot abort multipart uploads', async () => {
    const findings = await doctor(storeConfig(s3))
    expect(statuses(findings)).toMatchObject({ access: 'warn', clock: 'ok', cors: 'ok', 'expose-etag': 'ok' })
    expect(finding(findings, 'access').summary).toContain('AbortMultipartUpload answered HTTP 405')
  })

  it('says s3rver stores POST forms that break their policy: ok with formUploads off, a warning with it on', async () => {
    const off = finding(await doctor(storeConfig(s3)), 'forms')
    expect(off).toMatchObject({
      status: 'ok',
      summary: expect.stringMatching(
        /^storage does not enforce POST policies \(it stored a form with a body one byte longer/,
      ),
    })
    expect(off.summary).toMatch(/: leave formUploads off$/)
    const on = finding(await doctor(storeConfig(s3, { formUploads: true })), 'forms')
    expect(on).toMatchObject({ status: 'warn', fix: expect.stringContaining('Leave formUploads off') })
  })

  // Issue 35: against the README's own local store, doctor warned for an IAM policy s3rver cannot
  // enforce and suggested an STS mode for RGW and MinIO.
  it('recognises the local store: no IAM-policy or STS advice, "expected for the local store"', async () => {
    const findings = await doctor(storeConfig(s3))
    expect(finding(findings, 'least-privilege')).toMatchObject({
      status: 'ok',
      summary: expect.stringContaining('expected for the local store'),
    })
    expect(finding(findings, 'sts')).toMatchObject({
      status: 'skip',
      summary: expect.stringContaining('expected for the local store'),
    })
    expect(JSON.stringify(findings)).not.toMatch(/S3_UPLOAD_STS_MODE|"Statement"/)
  })

  it('a wrong bucket name: the spelling of S3_UPLOAD_BUCKET before any create-bucket command', async () => {
    const fix = finding(await doctor(storeConfig(s3, { bucket: 'uplaods' })), 'access').fix ?? ''
    expect(fix.indexOf('Check the spelling of S3_UPLOAD_BUCKET ("uplaods")')).toBe(0)
    expect(fix).toContain('create-bucket')
  })

  it('storage or STS out of reach: "could not reach", before any policy advice', async () => {
    const closed = await freePort() // nothing listens there once freePort has closed it
    const storage = await doctor(storeConfig(s3, { endpoint: `http://127.0.0.1:${closed}` }))
    expect(finding(storage, 'access')).toMatchObject({
      status: 'fail',
      summary: `could not reach storage at http://127.0.0.1:${closed} (ECONNREFUSED: nothing listens there)`,
    })
    const sts = finding(
      await doctor(
        storeConfig(s3, {
          sts: { mode: 'assume-role', roleArn: 'arn:aws:iam:::role/uploads', endpoint: `http://127.0.0.1:${closed}` },
        }),
      ),
      'sts',
    )
    expect(sts).toMatchObject({
      status: 'fail',
      summary: `could not reach STS at http://127.0.0.1:${closed} (ECONNREFUSED): no upload credentials can be issued`,
    })
    expect(sts.fix).toMatch(/^Check S3_UPLOAD_STS_ENDPOINT/)
    expect(sts.fix).not.toContain('Statement')
  })

  it('finds the missing ExposeHeaders on a bucket whose CORS hides ETag', async () => {
    const findings = await doctor(storeConfig(s3, { bucket: s3.bucketWithoutExposedETag }))
    expect(finding(findings, 'expose-etag')).toMatchObject({
      status: 'fail',
      fix: expect.stringContaining('ExposeHeaders'),
    })
  })

  // Issue 23: right after the access check passed, "could not read lifecycle rules: SignatureDoesNotMatch …
  // Check your key and signing method". s3rver answers bucket-configuration calls so; the key is fine.
  it('says the store does not support reading lifecycle rules, not that the key is wrong', async () => {
    const lifecycle = finding(await doctor(storeConfig(s3)), 'lifecycle')
    expect(lifecycle.status).toBe('warn')
    expect(lifecycle.summary).toContain('the key is fine, the store most likely does not support the call')
    expect(lifecycle.summary).not.toMatch(/check your key/i)
  })

  // Issue 23: --dry-run would have replaced the bucket's wildcard rule with one for a single origin.
  it('setup-bucket keeps a CORS rule it cannot read when a preflight shows it works, and writes no lifecycle rule the store lacks', async () => {
    for (const args of [['--dry-run'], ['--yes']]) {
      const { code, output } = await cli(['setup-bucket', '--origin', ORIGIN, ...args], storeConfig(s3))
      expect(output).toContain(`CORS rules: unchanged. This store answered GetBucketCors with SignatureDoesNotMatch`)
      expect(output).toContain(
        `A browser preflight from ${ORIGIN} already passes, so the bucket's rules stay as they are`,
      )
      expect(output).not.toContain('"CORSRules"')
      expect(output).toContain('Lifecycle rules: not supported by this store.')
      expect(output).toContain('Nothing to change.')
      expect(code).toBe(0)
    }
    expect(statuses(await doctor(storeConfig(s3)))).toMatchObject({ cors: 'ok', 'expose-etag': 'ok' })
  })

  it('still blames the key when the key is wrong', async () => {
    const wrong = storeConfig(s3, { secretAccessKey: 'not-the-secret' })
    expect(finding(await doctor(wrong), 'access')).toMatchObject({
      status: 'fail',
      fix: expect.stringContaining('S3_UPLOAD_SECRET does not belong to S3_UPLOAD_KEY'),
    })
    const { output } = await cli(['setup-bucket', '--origin', ORIGIN, '--dry-run'], wrong)
    expect(output).toContain('Lifecycle rules: adding one. The current rules could not be read (SignatureDoesNotMatch')
    expect(output).not.toContain('not supported')
  })

  it('without settings, the command names every missing one and exits 2', async () => {
    const { code, output } = await cli(['doctor'], {})
    expect(code).toBe(2)
    expect(output).toMatch(
      /S3_UPLOAD_BUCKET.*S3_UPLOAD_REGION.*S3_UPLOAD_KEY.*S3_UPLOAD_SECRET.*S3_UPLOAD_TICKET_SECRET/s,
    )
  })
})

describe('on OpenStack Swift, whose S3 API has no PutBucketCors (501)', () => {
  const swift = inject('swift')

  it('recognises Swift, passes the preflight its proxy config allows, and warns that CORS lives in proxy-server.conf and error replies reach no page', async () => {
    const findings = await doctor(storeConfig(swift))
    expect(statuses(findings)).toMatchObject({ access: 'ok', clock: 'ok', cors: 'warn', 'expose-etag': 'ok' })
    const cors = finding(findings, 'cors')
    expect(cors.summary).toContain("from Swift's proxy config (its S3 API has no bucket CORS)")
    expect(cors.summary).toContain('only as a network error')
    expect(cors.fix).toContain(`cors_allow_origin = ${ORIGIN}`)
    expect(cors.fix).toContain('cors_expose_headers = etag')
    expect(cors.fix).toContain('[filter:s3api]')
    // Swift takes no lifecycle rules either: the fix is the upload API's sweep.
    expect(finding(findings, 'lifecycle').fix).toContain("OpenStack Swift's S3 API has no lifecycle rules")
    expect(finding(findings, 'forms')).toMatchObject({
      status: 'ok',
      summary: 'storage did not store an honest POST form (no POST Object): leave formUploads off',
    })
  })

  it('setup-bucket reads the 501 as the store, not the key, and writes no CORS rule when the preflight passes', async () => {
    const { output } = await cli(['setup-bucket', '--origin', ORIGIN, '--yes'], storeConfig(swift))
    // Its preflight passes (the proxy config allows the origin): nothing to write, and nothing written.
    expect(output).toContain(
      'CORS rules: unchanged. This store does not support GetBucketCors (it answered NotImplemented). A browser preflight from',
    )
  })
})

describe('the clock check', () => {
  const at = (offsetMs: number) => ({
    reply: { status: 200, headers: new Headers({ date: new Date(Date.now() + offsetMs).toUTCString() }), body: '' },
  })
  it('passes within a minute, warns beyond, fails beyond the 15 minutes storage accepts', () => {
    expect(clockFinding(at(0)).status).toBe('ok')
    expect(clockFinding(at(5 * 60_000)).status).toBe('warn')
    expect(clockFinding(at(-20 * 60_000))).toMatchObject({
      status: 'fail',
      summary: expect.stringContaining('RequestTimeTooSkewed'),
    })
  })
})
