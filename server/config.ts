import { MIN_PART_SIZE } from '../protocol/limits.ts'

/** pino-compatible: Fastify's `request.log` and `app.log` fit as they are. */
export interface Logger {
  error(obj: object, msg?: string): void
}

export type StsMode = 'federation' | 'assume-role'

export interface StsConfig {
  /** @default 'federation' (AWS GetFederationToken); 'assume-role' also works with RGW and MinIO. */
  mode?: StsMode
  /** @default AWS STS for 'federation'; the storage `endpoint` for 'assume-role' (RGW and MinIO serve STS there) */
  endpoint?: string
  /** Required for 'assume-role'. */
  roleArn?: string
}

export interface UploadHandlerConfig {
  /** @default process.env.S3_UPLOAD_KEY */
  accessKeyId?: string
  /** @default process.env.S3_UPLOAD_SECRET */
  secretAccessKey?: string
  /** @default process.env.S3_UPLOAD_BUCKET */
  bucket?: string
  /** @default process.env.S3_UPLOAD_REGION */
  region?: string
  /** A custom S3-compatible store (RGW, MinIO, R2). @default process.env.S3_UPLOAD_ENDPOINT */
  endpoint?: string
  /** @default process.env.S3_UPLOAD_FORCE_PATH_STYLE === 'true' */
  forcePathStyle?: boolean
  sts?: StsConfig
  /**
   * The object key for an upload. `body` is the parsed request body, extra fields included
   * (the request's own body has already been read). @default `next-s3-uploads/{uuid}/{sanitized filename}`
   */
  key?: (request: Request, filename: string, body: Record<string, unknown>) => string | Promise<string>
  /**
   * Called on every route before the body is parsed or anything is issued; false → 403. Decide on
   * headers (cookies, Authorization): under Fastify it runs in onRequest, before the body is read.
   */
  authorize?: (request: Request) => boolean | Promise<boolean>
  /**
   * Bytes; larger declared files → 413, and requests must then declare `filesize`. Presigned URLs
   * bind the declared size, so storage enforces it; token credentials cannot carry a size limit.
   */
  maxFileSize?: number
  /** Exact types (`application/pdf`) or patterns (`image/*`); anything else → 415. */
  allowedTypes?: readonly string[]
  /** Presigned uploads with `filesize` above this go multipart. @default 5 MiB (the engine's part size) */
  multipartThreshold?: number
  /** Part size of presigned multipart uploads, raised to keep within 10 000 parts. @default 5 MiB */
  partSize?: number
  /**
   * Seconds each multipart part URL stays valid (1..604800). The engine fetches part URLs just
   * ahead of need and re-asks for one that storage refuses as expired, so a short lifetime costs
   * little and narrows what a leaked URL allows. Single-PUT URLs keep next-s3-upload's 3600 s.
   * @default 3600
   */
  partUrlExpiresIn?: number
  /** HMAC key for multipart tickets; instances behind one load balancer must share it. @default derived from secretAccessKey */
  ticketSecret?: string
  /** How long a multipart ticket stays valid. @default 86400 (24 h) */
  ticketTtlSeconds?: number
  /** @default console */
  logger?: Logger
  /**
   * What `GET {prefix}/info` tells the page, over what the config implies (server/info.ts):
   * `store` names the storage for display; `tokenUnavailableReason` turns token mode off, saying why.
   */
  info?: { store?: string; tokenUnavailableReason?: string }
}

/** What the handler runs on: every required setting present and checked. */
export interface ResolvedConfig
  extends Required<Pick<UploadHandlerConfig, 'accessKeyId' | 'secretAccessKey' | 'bucket' | 'region'>>,
    Omit<UploadHandlerConfig, 'accessKeyId' | 'secretAccessKey' | 'bucket' | 'region' | 'sts' | 'logger'> {
  forcePathStyle: boolean
  sts: { mode: StsMode; endpoint?: string; roleArn?: string }
  multipartThreshold: number
  partSize: number
  partUrlExpiresIn: number
  ticketTtlSeconds: number
  logger: Logger
}

export const defaultConfig = {
  multipartThreshold: MIN_PART_SIZE,
  partSize: MIN_PART_SIZE,
  partUrlExpiresIn: 60 * 60,
  ticketTtlSeconds: 24 * 60 * 60,
  logger: { error: (obj: object, msg?: string) => console.error(msg ?? 'updraft: error', obj) } satisfies Logger,
}

type Env = Record<string, string | undefined>

/** Workers have no `process` unless nodejs_compat is on: no environment then, not a ReferenceError. */
const processEnv = (): Env => globalThis.process?.env ?? {}

/** The S3_UPLOAD_* environment as a config; names as next-s3-upload reads them, plus Updraft's own. */
export function configFromEnv(env: Env = processEnv()): UploadHandlerConfig {
  const mode = present(env.S3_UPLOAD_STS_MODE)
  if (mode !== undefined && mode !== 'federation' && mode !== 'assume-role') {
    throw new TypeError(`updraft: S3_UPLOAD_STS_MODE must be 'federation' or 'assume-role', got '${mode}'`)
  }
  const sts: StsConfig = {
    mode,
    endpoint: present(env.S3_UPLOAD_STS_ENDPOINT),
    roleArn: present(env.S3_UPLOAD_ROLE_ARN),
  }
  return {
    accessKeyId: present(env.S3_UPLOAD_KEY),
    secretAccessKey: present(env.S3_UPLOAD_SECRET),
    bucket: present(env.S3_UPLOAD_BUCKET),
    region: present(env.S3_UPLOAD_REGION),
    endpoint: present(env.S3_UPLOAD_ENDPOINT),
    forcePathStyle: /^(1|true|yes)$/i.test(env.S3_UPLOAD_FORCE_PATH_STYLE ?? ''),
    sts,
    ticketSecret: present(env.S3_UPLOAD_TICKET_SECRET),
  }
}

/** Config name → the variable it falls back to, for the "missing settings" message. */
const REQUIRED = [
  ['accessKeyId', 'S3_UPLOAD_KEY'],
  ['secretAccessKey', 'S3_UPLOAD_SECRET'],
  ['bucket', 'S3_UPLOAD_BUCKET'],
  ['region', 'S3_UPLOAD_REGION'],
] as const

/**
 * Fills what `config` leaves out from the environment (as next-s3-upload does) and checks it
 * all at once, so a misconfigured server fails when it starts rather than on its first upload.
 */
export function resolveConfig(config: UploadHandlerConfig = {}, env: Env = processEnv()): ResolvedConfig {
  const fromEnv = configFromEnv(env)
  const pick = <K extends keyof UploadHandlerConfig>(name: K) => present(config[name]) ?? fromEnv[name]
  const missing = REQUIRED.filter(([name]) => pick(name) === undefined).map(([name, variable]) => `${name} (${variable})`)
  const sts = { ...fromEnv.sts, ...definedOnly(config.sts ?? {}) }
  const mode = sts.mode ?? 'federation'
  if (mode === 'assume-role' && !present(sts.roleArn)) missing.push('sts.roleArn (S3_UPLOAD_ROLE_ARN)')
  if (missing.length > 0) throw new TypeError(`updraft: missing settings: ${missing.join(', ')}`)
  if (mode !== 'federation' && mode !== 'assume-role') {
    throw new TypeError(`updraft: sts.mode must be 'federation' or 'assume-role', got '${String(mode)}'`)
  }

  const resolved: ResolvedConfig = {
    ...defaultConfig,
    ...definedOnly(config),
    accessKeyId: pick('accessKeyId') as string,
    secretAccessKey: pick('secretAccessKey') as string,
    bucket: pick('bucket') as string,
    region: pick('region') as string,
    endpoint: pick('endpoint'),
    forcePathStyle: config.forcePathStyle ?? fromEnv.forcePathStyle ?? false,
    ticketSecret: pick('ticketSecret'),
    sts: {
      mode,
      roleArn: present(sts.roleArn),
      // RGW and MinIO answer STS on the storage endpoint; AWS federation has its own.
      endpoint: present(sts.endpoint) ?? (mode === 'assume-role' ? pick('endpoint') : undefined),
    },
  }
  checkNumber('multipartThreshold', resolved.multipartThreshold, 0)
  checkNumber('partSize', resolved.partSize, MIN_PART_SIZE)
  // SigV4 presigned URLs live at most 7 days.
  checkNumber('partUrlExpiresIn', resolved.partUrlExpiresIn, 1, 604_800)
  checkNumber('ticketTtlSeconds', resolved.ticketTtlSeconds, 1)
  if (resolved.maxFileSize !== undefined) checkNumber('maxFileSize', resolved.maxFileSize, 0)
  return resolved
}

function checkNumber(name: string, value: number, min: number, max = Number.MAX_SAFE_INTEGER) {
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `of at least ${min}` : `from ${min} to ${max}`
    throw new RangeError(`updraft: ${name} must be a whole number ${range}, got ${value}`)
  }
}

/** An empty string is as good as unset: `S3_UPLOAD_KEY=` in a .env file configures nothing. */
function present<T>(value: T): Exclude<T, ''> | undefined {
  return value === '' || value === undefined || value === null ? undefined : (value as Exclude<T, ''>)
}

const definedOnly = <T extends object>(object: T): T =>
  Object.fromEntries(Object.entries(object).filter(([, value]) => value !== undefined)) as T
