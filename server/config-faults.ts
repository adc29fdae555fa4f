// Faults in the server's own settings: a wrong S3_UPLOAD_SECRET, an unknown bucket, a store or an
// STS out of reach. No retry heals them, so the page hears one final, typed reply
// (`code: 'ServerMisconfigured'`, which the engine does not retry), in words that name the kind of
// fault and nothing of the settings; the log hears one line per cause naming the setting to change
// and `npx updraft-s3 doctor`, at most once a minute (issue 35: a wrong secret had cost a page 25 s
// of retries and the log eight stack traces).
import { failedAt } from './bounds.ts'
import { isAws, type Logger, type ResolvedConfig } from './config.ts'
import { RequestError } from './request-error.ts'
import { FEDERATION_NEEDS_USER_KEY } from './sts.ts'

/** The same cause is logged again after this long at the earliest, with how many requests it refused meanwhile. */
export const FAULT_LOG_INTERVAL_MS = 60_000

/** What a page is told: the kind of fault, never a host, key or bucket name. */
const PAGE_WORDS = {
  credentials: 'its credentials were refused',
  bucket: 'its bucket does not exist',
  storage: 'it could not reach storage',
  sts: 'it could not reach its STS (the service that issues upload credentials)',
  permission: 'its key is not allowed to do what uploads need',
  settings: 'a setting is missing or invalid',
} as const

/**
 * A setting of the server is wrong: answered 500 with `code: 'ServerMisconfigured'`, which a page
 * does not retry. `message` is what the page reads; {@link ConfigurationFault.logLine} what the
 * operator reads.
 */
export class ConfigurationFault extends RequestError {
  override name = 'ConfigurationFault'
  /** The cause, for the log: one per kind of fault ("storage SignatureDoesNotMatch"). */
  readonly kind: string
  /** The line for the log: what was answered, which setting to change, and `npx updraft-s3 doctor`. */
  readonly logLine: string

  constructor(page: keyof typeof PAGE_WORDS, kind: string, logLine: string, cause: unknown) {
    super(
      500,
      `The upload API is misconfigured: ${PAGE_WORDS[page]}. No upload can succeed until its operator fixes it; the server's log says what to change`,
      'ServerMisconfigured',
    )
    this.kind = kind
    this.logLine = logLine
    this.cause = cause
  }
}

/** Node's words for "no connection was made": nothing on that port, no such host, no route. */
const UNREACHABLE = ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']

/** The code of an error (or of its cause: fetch's "fetch failed") that says no connection was made, else undefined. */
export function unreachableCode(error: unknown): string | undefined {
  for (let at = error, depth = 0; at instanceof Error && depth < 3; at = at.cause, depth++) {
    const code = (at as { code?: string }).code
    if (code && UNREACHABLE.includes(code)) return code
  }
  return undefined
}

/**
 * The configuration fault `error` shows, or undefined for any other failure. `reached`: whether the
 * store and STS have answered this upload API before; once they have, a refused connection is an
 * outage (the store restarting), which a retry may outlast, not a wrong setting.
 */
export function configurationFault(
  error: unknown,
  config: ResolvedConfig,
  reached: boolean,
): ConfigurationFault | undefined {
  if (error instanceof ConfigurationFault) return error
  if (!(error instanceof Error) || error instanceof RequestError) return undefined
  const service = failedAt(error)
  const code = String((error as { Code?: string }).Code ?? (error as { code?: string }).code ?? error.name)
  const doctor = 'Run npx updraft-s3 doctor to check every setting'
  const key = config.staticKey ? 'S3_UPLOAD_KEY' : "the server's credentials"
  const secret = config.staticKey ? 'S3_UPLOAD_SECRET' : "the server's credentials"
  const fault = (page: keyof typeof PAGE_WORDS, line: string) =>
    new ConfigurationFault(page, `${service ?? 'credentials'} ${code}`, `updraft: ${line}. ${doctor}`, error)

  if (error.message === FEDERATION_NEEDS_USER_KEY)
    return fault('credentials', FEDERATION_NEEDS_USER_KEY.replace(/^updraft: /, ''))
  // The SDK's own credential chain found nothing (no S3_UPLOAD_KEY, no role).
  if (error.name === 'CredentialsProviderError') {
    return fault(
      'credentials',
      `no credentials for storage (${error.message}): set S3_UPLOAD_KEY and S3_UPLOAD_SECRET, or run where the AWS SDK finds credentials`,
    )
  }
  if (service === undefined) return undefined
  const where = service === 'STS' ? stsName(config) : storeName(config)
  if (unreachableCode(error)) {
    if (reached) return undefined
    const setting =
      service === 'STS'
        ? config.sts.endpoint
          ? 'S3_UPLOAD_STS_ENDPOINT'
          : 'S3_UPLOAD_REGION'
        : config.endpoint
          ? `S3_UPLOAD_ENDPOINT${code === 'ECONNREFUSED' ? ' (nothing listens there: is the store running?)' : ''}`
          : 'S3_UPLOAD_REGION, and S3_UPLOAD_ENDPOINT for a store other than AWS'
    return fault(
      service === 'STS' ? 'sts' : 'storage',
      `could not reach ${where} (${code}: ${error.message}): check ${setting}`,
    )
  }
  const refused = `${where} refused the server's ${service === 'STS' ? 'request' : 'signature'} (${code})`
  switch (code) {
    case 'SignatureDoesNotMatch':
      return fault(
        'credentials',
        `${refused}: ${secret} is not the secret of ${key} (or S3_UPLOAD_REGION is not the store's)`,
      )
    case 'InvalidAccessKeyId':
    case 'InvalidClientTokenId':
      return fault('credentials', `${where} does not know the server's access key (${code}): check ${key}`)
    case 'NoSuchBucket':
      return fault(
        'bucket',
        `bucket "${config.bucket}" does not exist in ${where} (NoSuchBucket): check the spelling of S3_UPLOAD_BUCKET, or create the bucket`,
      )
    case 'AccessDenied':
      return fault(
        'permission',
        service === 'STS'
          ? `${refused}: allow ${key} ${config.sts.mode === 'assume-role' ? "sts:AssumeRole on S3_UPLOAD_ROLE_ARN (and name it in the role's trust policy)" : 'sts:GetFederationToken'}`
          : `${refused}: give ${key} the policy doctor prints (Ceph RGW also answers AccessDenied for a wrong ${secret})`,
      )
  }
  return undefined
}

/** Where storage is, for the log. */
const storeName = ({ endpoint, region }: ResolvedConfig) =>
  endpoint && !isAws(endpoint) ? `storage at ${new URL(endpoint).origin}` : `AWS S3 (${region})`
export const stsName = ({ sts, region }: Pick<ResolvedConfig, 'sts' | 'region'>) =>
  sts.endpoint ? `STS at ${new URL(sts.endpoint).origin}` : `AWS STS (${region})`

/**
 * The log of configuration faults: each cause once, then again at most every
 * {@link FAULT_LOG_INTERVAL_MS}, saying how many requests it refused in between (a page with 100
 * files must not write 100 lines). One line, no stack: the cause is known.
 */
export function createFaultLog(now = Date.now): (fault: ConfigurationFault, logger: Logger) => void {
  const seen = new Map<string, { at: number; since: number }>()
  return (fault, logger) => {
    const last = seen.get(fault.kind)
    if (last && now() - last.at < FAULT_LOG_INTERVAL_MS) {
      last.since++
      return
    }
    const since = last?.since ?? 0
    seen.set(fault.kind, { at: now(), since: 0 })
    const repeats =
      since > 0 ? ` (${since} more request${since === 1 ? '' : 's'} refused for this since the last such line)` : ''
    logger.error(
      { cause: fault.kind, ...(since > 0 && { repeats: since }) },
      `${fault.logLine}. Uploads are answered 500 ServerMisconfigured until then; said at most once a minute${repeats}`,
    )
  }
}
