// Configuration faults (server/config-faults.ts): which failures are a wrong setting, what the page
// and the log are told, and how often the log hears the same cause.
import { describe, expect, it } from 'vitest'
import { namingTimeouts } from '../../server/bounds.ts'
import { resolveConfig } from '../../server/config.ts'
import {
  ConfigurationFault,
  configurationFault,
  createFaultLog,
  FAULT_LOG_INTERVAL_MS,
} from '../../server/config-faults.ts'

const config = resolveConfig(
  {
    accessKeyId: 'AKID',
    secretAccessKey: 'secret-value',
    bucket: 'uploads',
    region: 'us-east-1',
    endpoint: 'http://127.0.0.1:4568',
    forcePathStyle: true,
  },
  {},
)

/** `error` as a storage call of the server's S3 client throws it (the naming middleware marks whose it was). */
async function fromStorage(error: Error): Promise<unknown> {
  const call = namingTimeouts(
    'Storage',
    1000,
  )(async () => {
    throw error
  })
  return call({}).catch((thrown: unknown) => thrown)
}
const sdkError = (name: string, status: number) =>
  Object.assign(new Error(name), { name, $metadata: { httpStatusCode: status } })
const nodeError = (code: string) => Object.assign(new Error(`connect ${code} 127.0.0.1:4568`), { code })

describe('configurationFault', () => {
  it.each([
    [
      'SignatureDoesNotMatch',
      sdkError('SignatureDoesNotMatch', 403),
      'its credentials were refused',
      'S3_UPLOAD_SECRET is not the secret of S3_UPLOAD_KEY',
    ],
    ['InvalidAccessKeyId', sdkError('InvalidAccessKeyId', 403), 'its credentials were refused', 'check S3_UPLOAD_KEY'],
    [
      'NoSuchBucket',
      sdkError('NoSuchBucket', 404),
      'its bucket does not exist',
      'check the spelling of S3_UPLOAD_BUCKET',
    ],
    [
      'ECONNREFUSED',
      nodeError('ECONNREFUSED'),
      'it could not reach storage',
      'could not reach storage at http://127.0.0.1:4568 (ECONNREFUSED',
    ],
    ['ENOTFOUND', nodeError('ENOTFOUND'), 'it could not reach storage', 'check S3_UPLOAD_ENDPOINT'],
  ])('%s from storage: final for the page, the setting for the log', async (_name, error, page, log) => {
    const fault = configurationFault(await fromStorage(error), config, false)
    expect(fault).toBeInstanceOf(ConfigurationFault)
    expect(fault).toMatchObject({ status: 500, code: 'ServerMisconfigured' })
    expect(fault!.message).toContain(page)
    expect(fault!.message).not.toMatch(/127\.0\.0\.1|uploads|AKID|S3_UPLOAD/)
    expect(fault!.logLine).toContain(log)
    expect(fault!.logLine).toContain('npx updraft-s3 doctor')
    expect(fault!.logLine).not.toContain('secret-value')
  })

  it('a refused connection after storage has answered is an outage, not a setting: left to the usual 5xx', async () => {
    expect(configurationFault(await fromStorage(nodeError('ECONNREFUSED')), config, true)).toBeUndefined()
    expect(configurationFault(await fromStorage(sdkError('SignatureDoesNotMatch', 403)), config, true)).toBeInstanceOf(
      ConfigurationFault,
    )
  })

  it('anything else is not a configuration fault: a 500 from storage, an error of the app, one not from an SDK call', async () => {
    expect(configurationFault(await fromStorage(sdkError('InternalError', 500)), config, false)).toBeUndefined()
    expect(configurationFault(new Error('database down'), config, false)).toBeUndefined()
    expect(configurationFault(sdkError('SignatureDoesNotMatch', 403), config, false)).toBeUndefined()
  })
})

describe('createFaultLog', () => {
  it('one line per cause, then at most one a minute, saying how many requests it refused meanwhile', async () => {
    let now = 0
    const log = createFaultLog(() => now)
    const lines: Array<{ obj: object; msg?: string }> = []
    const logger = { error: (obj: object, msg?: string) => void lines.push({ obj, msg }) }
    const secret = configurationFault(await fromStorage(sdkError('SignatureDoesNotMatch', 403)), config, false)!
    const bucket = configurationFault(await fromStorage(sdkError('NoSuchBucket', 404)), config, false)!
    for (let i = 0; i < 5; i++) log(secret, logger)
    log(bucket, logger)
    expect(lines.map(({ obj }) => obj)).toEqual([
      { cause: 'Storage SignatureDoesNotMatch' },
      { cause: 'Storage NoSuchBucket' },
    ])
    now = FAULT_LOG_INTERVAL_MS - 1
    log(secret, logger)
    expect(lines).toHaveLength(2)
    now = FAULT_LOG_INTERVAL_MS
    log(secret, logger)
    expect(lines[2]).toEqual({
      obj: { cause: 'Storage SignatureDoesNotMatch', repeats: 5 },
      msg: expect.stringMatching(/\(5 more requests refused for this since the last such line\)$/),
    })
  })
})
