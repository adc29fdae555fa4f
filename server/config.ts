import { MIN_PART_SIZE } from '../protocol/limits.ts'
import { DEFAULT_API_PATH } from '../protocol/wire.ts'
import { DEFAULT_TIMEOUTS, type Timeouts } from './bounds.ts'
import { checkContentDisposition, checkKeyPrefix, checkNumber, checkOrigin, mountPath } from './config-checks.ts'
import type { ServerCredentials } from './credentials.ts'
import type { Route } from './routes.ts'
import { normalizeAllowance, type ObjectExtrasAllowance } from './stored-extras.ts'
import { deriveTicketSecret } from './ticket.ts'

/** pino-compatible: Fastify's `request.log` and `app.log` fit as they are. */
export interface Logger {
  error(obj: object, msg?: string): void
  /** Said when the handler is created (e.g. that a store has no STS), and when `/complete` refuses an upload it checked (a file whose first bytes are not its type's). */
  warn?(obj: object, msg?: string): void
}

/** Which credentials sign the storage requests the upload API presigns for a page. */
export type PresignWith = 'session' | 'server-key'

/** How token mode (and session presigning) gets STS credentials: AWS GetFederationToken, or AssumeRole (AWS, RGW, MinIO). */
export type StsMode = 'federation' | 'assume-role'

/** Where and how the upload API gets STS credentials (`S3_UPLOAD_STS_MODE`, `_STS_ENDPOINT`, `_ROLE_ARN`). */
export interface StsConfig {
  /** @default 'federation' (AWS GetFederationToken); 'assume-role' also works with RGW and MinIO. */
  mode?: StsMode
  /** @default AWS STS for 'federation'; the storage `endpoint` for 'assume-role' (RGW and MinIO serve STS there) */
  endpoint?: string
  /** The role to assume; required for 'assume-role'. @default process.env.S3_UPLOAD_ROLE_ARN */
  roleArn?: string
  /**
   * Whether the store reads IAM policy variables in a session policy, so a token policy can name a
   * key holding `*`, `?` or `$` literally (`${*}`). Without them (Ceph RGW 16.2 reads `${*}` as
   * those four characters) token mode refuses such keys (400) rather than issue credentials for a
   * key nobody issued, and keys holding `:`, which RGW's policy parser discards; presigned mode
   * takes any key.
   * @default true on AWS (no `endpoint`, or an amazonaws.com one), false on any other store
   */
  policyVariables?: boolean
}

/**
 * Validates the `metadata` a page sends with `upload(file, { metadata })`: a function, or any
 * object with a `parse` method (a zod, valibot or arktype schema). What it returns is bound into
 * the upload's ticket; what it throws refuses the upload (400, with its message).
 */
export type MetadataValidator<Metadata> =
  | ((metadata: unknown, request: Request) => Metadata | Promise<Metadata>)
  | { parse(metadata: unknown): Metadata }

/** What `onUploadComplete` is told, after the server verified the object in storage. */
export interface CompletedUpload<Metadata = unknown> {
  /** The object's key, as the ticket bound it. */
  key: string
  /** The bucket, as the ticket bound it. */
  bucket: string
  /** Bytes, as storage holds them: equal to the size the page declared (or the stream's real length when it said `sizeUnknown`), within `maxFileSize`. */
  size: number
  /** As storage serves it: the Content-Type issued for the upload. */
  contentType: string
  /** As storage reports it (HEAD). */
  etag: string
  /** What the `metadata` option returned for the upload request, read from the ticket: never from `/complete`. */
  metadata: Metadata
  /**
   * Stable for the upload, the same on every retry of `/complete`: deduplicate on it (a unique
   * index, an upsert) to record each upload exactly once. Storage's UploadId for a presigned
   * multipart upload, else one minted when the upload was issued.
   */
  uploadId: string
  /** The `/complete` request (its cookies and headers identify the visitor, as at the upload request). */
  request: Request
}

/**
 * Settings of {@link createUploadHandler}, {@link createUploadSweeper} and the Fastify plugin.
 * Every one is optional: the store's settings fall back to the `S3_UPLOAD_*` environment
 * variables next-s3-upload reads, and the rest have the defaults below.
 */
export interface UploadHandlerConfig<Metadata = unknown, ServerData = unknown> {
  /**
   * Where {@link createUploadHandler} is mounted, as the request's URL path reads: the upload
   * request is `POST {path}`, the other routes are under it (`{path}/parts`, `GET {path}/info`, …;
   * server/routes.ts). Any other path under it answers 404 naming the routes; a path outside it
   * answers 404 naming this setting. The Fastify plugin mounts at its `prefix` instead.
   * @default '/api/s3-upload' (next-s3-upload's path)
   */
  path?: string
  /**
   * A static key: an IAM user's (token mode's GetFederationToken needs one), R2's, B2's, MinIO's
   * or RGW's. Leave it and `secretAccessKey` unset to use `credentials`, or on AWS the SDK's
   * default chain. @default process.env.S3_UPLOAD_KEY
   */
  accessKeyId?: string
  /** @default process.env.S3_UPLOAD_SECRET */
  secretAccessKey?: string
  /**
   * The server's credentials when they are not a static key: any AWS SDK credential provider
   * (`fromContainerMetadata()`, `fromWebToken(…)`, `fromIni({ profile })` from
   * `@aws-sdk/credential-providers`, or your own `async () => ({ accessKeyId, … })`). With none
   * of `accessKeyId`, `secretAccessKey` and `credentials`, the AWS SDK's default chain is used
   * (environment, shared config and SSO profiles, web identity tokens, ECS/EKS container
   * credentials, EC2 instance metadata): how Lambda, ECS, EKS and Vercel's OIDC run. Temporary
   * credentials need `ticketSecret`, and token mode then needs `sts.mode: 'assume-role'`
   * (GetFederationToken takes an IAM user's long-term keys only). @default the SDK's default chain
   */
  credentials?: ServerCredentials
  /** @default process.env.S3_UPLOAD_BUCKET */
  bucket?: string
  /** @default process.env.S3_UPLOAD_REGION */
  region?: string
  /** A custom S3-compatible store (RGW, MinIO, R2). @default process.env.S3_UPLOAD_ENDPOINT */
  endpoint?: string
  /** @default process.env.S3_UPLOAD_FORCE_PATH_STYLE === 'true' */
  forcePathStyle?: boolean
  /** STS for token mode and session presigning. @default federation (AWS), from `S3_UPLOAD_STS_*` */
  sts?: StsConfig
  /**
   * The object key for an upload. `body` is the parsed request body, extra fields included
   * (the request's own body has already been read). @default `next-s3-uploads/{uuid}/{sanitized filename or relative path}` (server/key.ts)
   */
  key?: (
    request: Request,
    filename: string,
    body: Record<string, unknown>,
    metadata: Metadata,
  ) => string | Promise<string>
  /**
   * Validates the page's `metadata` (`upload(file, { metadata })`); the result goes into the
   * ticket, to the `key` callback and to `onUploadComplete`. Without it, a request that carries
   * metadata is refused (400). @default none
   */
  metadata?: MetadataValidator<Metadata>
  /**
   * Called at `POST {prefix}/complete` once the object is verified in storage (exists, written for
   * this upload, declared size, issued Content-Type, first bytes of the declared type); its JSON
   * return goes back to the page as `result.serverData`. At least once per upload: the page retries
   * a `/complete` whose reply it lost, so deduplicate on `uploadId`. Throwing a `RequestError`
   * refuses the upload (its status and message go to the page, the object is deleted); any other
   * error keeps the object and answers 500 with a message saying the upload was not recorded, which
   * the page retries (docs/completion.md).
   */
  onUploadComplete?: (upload: CompletedUpload<Metadata>) => ServerData | Promise<ServerData>
  /**
   * At `/complete`, read the object's first bytes (a ranged GET) and refuse one whose declared
   * type has a known signature that they do not match (PNG, JPEG, GIF, WebP, AVIF, BMP, TIFF, PDF,
   * MP4/QuickTime, WebM: server/file-signatures.ts). @default true
   */
  checkFileSignatures?: boolean
  /**
   * Called on every route before the body is parsed or anything is issued; false → 403. Decide on
   * headers (cookies, Authorization): under Fastify it runs in onRequest, before the body is read.
   * @default none: anyone who can reach the upload API may upload
   */
  authorize?: (request: Request) => boolean | Promise<boolean>
  /**
   * Bytes; larger declared files → 413, and requests must then declare `filesize` or say
   * `sizeUnknown` (a stream). Presigned URLs bind the declared size, so storage enforces it; token
   * credentials cannot carry a size limit. Every upload is also checked at `/complete`: one over
   * the limit is deleted and refused (413). Of unknown length, presigned part numbers stop at
   * `ceil(maxFileSize / partSize)` and each part URL binds at most `partSize` bytes.
   * @default none
   */
  maxFileSize?: number
  /** Exact types (`application/pdf`) or patterns (`image/*`); anything else → 415. Setting it turns token mode off. @default any type but active content (HTML, SVG, scripts, …) */
  allowedTypes?: readonly string[]
  /** Presigned uploads with `filesize` above this go multipart. @default 5 MiB (the engine's part size) */
  multipartThreshold?: number
  /**
   * Part size of presigned multipart uploads, raised to keep within 10 000 parts (for an upload of
   * unknown length, raised so that a file of `maxFileSize` fits; without `maxFileSize` such an
   * upload stops at 10 000 parts of this size). @default 5 MiB
   */
  partSize?: number
  /**
   * Seconds each multipart part URL stays valid (1..604800). The engine fetches part URLs just
   * ahead of need and re-asks for one that storage refuses as expired, so a short lifetime costs
   * little and narrows what a leaked URL allows. Single-PUT URLs keep next-s3-upload's 3600 s.
   * @default 3600
   */
  partUrlExpiresIn?: number
  /**
   * HMAC key for upload tickets; instances behind one load balancer must share it. Required when
   * the server has no static key (`credentials`, or the SDK's chain): temporary credentials rotate,
   * and tickets must outlive them. @default process.env.S3_UPLOAD_TICKET_SECRET, else derived from secretAccessKey
   */
  ticketSecret?: string
  /** How long an upload ticket stays valid: `/complete` (and a multipart upload's `/parts`) must come within it. @default 86400 (24 h) */
  ticketTtlSeconds?: number
  /**
   * Let pages resume an upload after a reload (the engine's `resume` option): presigned mode may
   * ask `/list-parts` which parts storage holds for a multipart ticket (the server's key then needs
   * `s3:ListMultipartUploadParts`), and token credentials also allow `s3:ListMultipartUploadParts`
   * on their one key. Off, neither is possible. @default false
   */
  resumable?: boolean
  /**
   * Answer a presigned upload request whose page can send an S3 POST form (`form: true`, as the
   * engine asks for a file of one request without `checksum`) with a form — a POST policy binding
   * the key, the Content-Type, the signed headers, the exact length and the expiry a PUT URL binds
   * — rather than a PUT URL. Forms go to the bucket's one URL, so a browser sends one CORS
   * preflight for the page rather than one per file. Before the first form, the upload API checks
   * once that storage enforces POST policies (it must refuse a form one byte too long, one with a
   * field the policy does not name, and one with another Content-Type, and keep the Content-Type and
   * `contentDisposition` an honest one sets); a store that does not (s3rver stores every such form,
   * Swift's S3 API has no POST Object, Ceph RGW drops Content-Disposition) gets PUT URLs, with a
   * warning. Ceph RGW also keeps no Cache-Control from a form (said once, forms still go).
   * Never for a directory bucket (S3 Express has no POST Object). `npx updraft-s3 doctor` runs the
   * same check. @default process.env.S3_UPLOAD_FORM_UPLOADS (`true`), else false
   */
  formUploads?: boolean
  /**
   * Where the upload API's uploads live: default keys are `{keyPrefix}{uuid}/{name}`, the session
   * credential that signs presigned URLs may write only under it, and `sweepStaleUploads` cleans
   * only under it. @default 'next-s3-uploads/'
   */
  keyPrefix?: string
  /**
   * What signs presigned URLs. 'session': a short-lived STS credential (AssumeRole or
   * GetFederationToken) whose policy allows only the upload actions under `keyPrefix`, so a page
   * that adds headers to a URL (`x-amz-copy-source`, …) gets nothing the upload itself did not
   * need. 'server-key': the server's own key, for stores without STS (R2, B2, s3rver): that key
   * must then be least-privileged (docs/security.md).
   * Left unset on a store other than AWS that has an STS, URLs are signed by the session unless
   * storage refuses the browser's CORS preflight for a session-signed URL (Ceph RGW 16.2 answers
   * 403 SignatureDoesNotMatch, so no page could upload): checked once, on the first presigned
   * request, and then the server key signs, with a warning saying why. Set 'session' to keep
   * the session signer regardless (uploads from Node only, on such a store).
   * @default 'session' where the config has an STS (on a store other than AWS: unless storage refuses its preflight), else 'server-key'
   */
  presignWith?: PresignWith
  /**
   * The canned ACL signed into every presigned upload, so a page cannot choose another (RGW and
   * s3rver apply unsigned `x-amz-acl` headers); `false` signs none. @default 'bucket-owner-full-control' on AWS (what buckets with ACLs disabled accept), 'private' elsewhere (R2 refuses other values)
   */
  objectAcl?: CannedAcl | false
  /** A Content-Disposition signed into every presigned upload, e.g. 'attachment' (browsers then download, never render). @default none */
  contentDisposition?: string
  /**
   * Sign `x-amz-copy-source-range: bytes=1-0`, a range no object satisfies, into every single-PUT
   * URL, so that a page adding `x-amz-copy-source` to the URL gets no server-side copy made with
   * the signer's rights (Ceph RGW and s3rver apply such unsigned headers; docs/security.md). The
   * page sends it as it sends every header the reply lists, and the bucket's CORS rule must allow
   * it. `false` only for next-s3-upload's own client, which sends no header from the reply
   * (with `objectAcl: false`), and then only with a signer that may read nothing.
   * @default true on every store but AWS (which refuses unsigned `x-amz-*` headers itself)
   */
  copyGuard?: boolean
  /**
   * What `/complete` lets an object carry beyond what the upload API issued. It refuses (422) and
   * deletes an object holding any header the upload was not issued — `x-amz-meta-*`, object tags,
   * `x-amz-website-redirect-location`, `Content-Encoding`, `Content-Language`, `Expires`, a
   * Content-Disposition other than `contentDisposition` — which RGW and s3rver store when a page
   * adds them to a presigned URL, and any store keeps from token-mode requests. Name here the tags
   * and `x-amz-meta-*` names your own token-mode pages send (`taggingHeaders`, `objectHeaders`).
   * @default none: no tags, no `x-amz-meta-*`
   */
  allowedObjectExtras?: ObjectExtrasAllowance
  /**
   * Origins (`https://app.example.com`) whose pages may call this upload API from another origin;
   * the handler answers their CORS preflight. Any other cross-site request is refused (403): same-
   * origin pages and servers (no `Origin`) need no entry. @default none
   */
  allowedOrigins?: readonly string[]
  /**
   * A rate limiter for the Web handler (the Fastify plugin has `rateLimit`): called on every
   * POST before `authorize`; a number of seconds → 429 with `Retry-After`, undefined → go on.
   * It counts files: a batch (`/batch`, `/batch/complete`) calls it once more per file after the
   * first, once its body is read, until it answers a wait; the files past that are refused
   * (429 in their entries) and the first ones go.
   * @default none
   */
  throttle?: (request: Request, route: Route) => number | undefined | Promise<number | undefined>
  /**
   * How long, in milliseconds, the upload API waits on what it calls: its credentials source, STS,
   * storage. What does not answer in time makes the page's request a 503 naming it, and the next
   * request asks again (a source that recovers needs no restart). The page's request waits at most
   * `credentials`, then 3 attempts of `sts` or `storage` per call (the SDK's retries).
   * @default `{ credentials: 5000, sts: 5000, storage: 10000 }`
   */
  timeouts?: Timeouts
  /** @default console */
  logger?: Logger
  /**
   * What `GET {prefix}/info` tells the page, over what the config implies (server/info.ts):
   * `store` names the storage for display; `tokenUnavailableReason` turns token mode off, saying why.
   * @default what the config implies
   */
  info?: { store?: string; tokenUnavailableReason?: string }
}

/** What the handler runs on: every required setting present and checked. */
export interface ResolvedConfig
  extends Required<Pick<UploadHandlerConfig, 'bucket' | 'region' | 'ticketSecret'>>,
    Omit<
      UploadHandlerConfig,
      'accessKeyId' | 'secretAccessKey' | 'credentials' | 'bucket' | 'region' | 'ticketSecret' | 'sts' | 'logger'
    > {
  /** The static key, or the provider given; undefined: the AWS SDK's default chain (server/credentials.ts). */
  credentials: ServerCredentials | undefined
  /** Whether `credentials` is a static key given in the config or the environment. */
  staticKey: boolean
  forcePathStyle: boolean
  sts: { mode: StsMode; endpoint?: string; roleArn?: string; policyVariables: boolean }
  multipartThreshold: number
  partSize: number
  partUrlExpiresIn: number
  ticketTtlSeconds: number
  logger: Logger
  /** Normalized: no trailing `/`, and `''` for the root. */
  path: string
  keyPrefix: string
  presignWith: PresignWith
  /**
   * presignWith was left to its default, 'session', on a store other than AWS: the signer falls
   * back to the server key where storage refuses the CORS preflight of session-signed URLs
   * (server/session-signer.ts). AWS answers preflights without checking the signature.
   */
  presignFallback: boolean
  objectAcl: CannedAcl | undefined
  /** Whether single-PUT URLs sign the copy guard (`UploadHandlerConfig.copyGuard`). */
  copyGuard: boolean
  /** Every bound set (`UploadHandlerConfig.timeouts`, defaults filled in). */
  timeouts: Required<Timeouts>
  /** Whether /complete checks first bytes (`UploadHandlerConfig.checkFileSignatures`). */
  checkFileSignatures: boolean
}

/** One of S3's canned ACLs, for `objectAcl`: https://docs.aws.amazon.com/AmazonS3/latest/userguide/acl-overview.html#canned-acl */
export type CannedAcl =
  | 'private'
  | 'public-read'
  | 'public-read-write'
  | 'authenticated-read'
  | 'aws-exec-read'
  | 'bucket-owner-read'
  | 'bucket-owner-full-control'

/** The same list at run time, to check `objectAcl`; a Record, so the two cannot drift apart. */
const CANNED_ACLS: Record<CannedAcl, true> = {
  private: true,
  'public-read': true,
  'public-read-write': true,
  'authenticated-read': true,
  'aws-exec-read': true,
  'bucket-owner-read': true,
  'bucket-owner-full-control': true,
}

const defaultConfig = {
  multipartThreshold: MIN_PART_SIZE,
  partSize: MIN_PART_SIZE,
  partUrlExpiresIn: 60 * 60,
  ticketTtlSeconds: 24 * 60 * 60,
  resumable: false,
  formUploads: false,
  path: DEFAULT_API_PATH,
  keyPrefix: 'next-s3-uploads/',
  checkFileSignatures: true,
  logger: {
    error: (obj: object, msg?: string) => console.error(msg ?? 'updraft: error', obj),
    warn: (_obj: object, msg?: string) => warnOnce(msg ?? 'updraft: warning'),
  } satisfies Logger,
}

/** Every handler a process creates for the same store says the same thing: once is enough. */
const warned = new Set<string>()
const warnOnce = (message: string) => {
  if (warned.has(message)) return
  warned.add(message)
  console.warn(message)
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
    presignWith: present(env.S3_UPLOAD_PRESIGN_WITH) as PresignWith | undefined,
    ...(/^(1|true|yes)$/i.test(env.S3_UPLOAD_FORM_UPLOADS ?? '') && { formUploads: true }),
  }
}

/** Config name → the variable it falls back to, for the "missing settings" message. */
const REQUIRED = [
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
  const missing = REQUIRED.filter(([name]) => pick(name) === undefined).map(
    ([name, variable]) => `${name} (${variable})`,
  )
  const sts = { ...fromEnv.sts, ...definedOnly(config.sts ?? {}) }
  const mode = sts.mode ?? 'federation'
  if (mode === 'assume-role' && !present(sts.roleArn)) missing.push('sts.roleArn (S3_UPLOAD_ROLE_ARN)')
  const accessKeyId = pick('accessKeyId')
  const secretAccessKey = pick('secretAccessKey')
  // Half a key is a mistake to name, not a reason to look elsewhere for credentials.
  if (accessKeyId === undefined && secretAccessKey !== undefined)
    missing.push('accessKeyId (S3_UPLOAD_KEY), as secretAccessKey is set')
  if (secretAccessKey === undefined && accessKeyId !== undefined)
    missing.push('secretAccessKey (S3_UPLOAD_SECRET), as accessKeyId is set')
  const keys = accessKeyId !== undefined && secretAccessKey !== undefined ? { accessKeyId, secretAccessKey } : undefined
  if (keys && config.credentials !== undefined) {
    throw new TypeError(
      'updraft: set either a static key (accessKeyId and secretAccessKey, or S3_UPLOAD_KEY and S3_UPLOAD_SECRET) or credentials, not both',
    )
  }
  const credentials: ServerCredentials | undefined = keys ?? config.credentials
  // A key that does not rotate: tickets can be signed with a secret derived from it.
  const fixed =
    credentials !== undefined &&
    typeof credentials !== 'function' &&
    !('sessionToken' in credentials && credentials.sessionToken)
      ? credentials
      : undefined
  const ticketSecret = pick('ticketSecret') ?? (fixed ? deriveTicketSecret(fixed.secretAccessKey) : undefined)
  if (ticketSecret === undefined && accessKeyId === undefined && secretAccessKey === undefined) {
    missing.push(
      credentials === undefined
        ? "a static key (S3_UPLOAD_KEY and S3_UPLOAD_SECRET) or, with credentials from the AWS SDK's chain, ticketSecret (S3_UPLOAD_TICKET_SECRET)"
        : 'ticketSecret (S3_UPLOAD_TICKET_SECRET), as the credentials are not a static key: tickets must outlive them, on every instance',
    )
  }
  if (missing.length > 0) throw new TypeError(`updraft: missing settings: ${missing.join(', ')}`)
  if (mode !== 'federation' && mode !== 'assume-role') {
    throw new TypeError(`updraft: sts.mode must be 'federation' or 'assume-role', got '${String(mode)}'`)
  }
  if (sts.policyVariables !== undefined && typeof sts.policyVariables !== 'boolean') {
    throw new TypeError(
      `updraft: sts.policyVariables must be true or false, got ${JSON.stringify(sts.policyVariables)}`,
    )
  }

  // The key is `credentials` from here on.
  const { accessKeyId: _id, secretAccessKey: _secret, credentials: _given, ...settings } = config
  const withDefaults = { ...defaultConfig, ...definedOnly(settings) }
  const resolved: ResolvedConfig = {
    ...withDefaults,
    credentials,
    staticKey: fixed !== undefined,
    ticketSecret: ticketSecret!,
    bucket: pick('bucket') as string,
    region: pick('region') as string,
    endpoint: pick('endpoint'),
    forcePathStyle: config.forcePathStyle ?? fromEnv.forcePathStyle ?? false,
    formUploads: config.formUploads ?? fromEnv.formUploads ?? false,
    sts: {
      mode,
      roleArn: present(sts.roleArn),
      // RGW and MinIO answer STS on the storage endpoint; AWS federation has its own.
      endpoint: present(sts.endpoint) ?? (mode === 'assume-role' ? pick('endpoint') : undefined),
      policyVariables: sts.policyVariables ?? isAws(pick('endpoint') ?? 'https://s3.amazonaws.com'),
    },
    // Filled in below, once the store is known.
    presignWith: 'server-key',
    presignFallback: false,
    objectAcl: undefined,
    copyGuard: false,
    timeouts: { ...DEFAULT_TIMEOUTS, ...definedOnly(config.timeouts ?? {}) },
  }
  const noSts = stsUnavailableReason(resolved)
  const presignWith = config.presignWith ?? fromEnv.presignWith
  if (presignWith === 'session' && noSts !== undefined) {
    throw new TypeError(`updraft: presignWith 'session' needs an STS, and this config has none: ${noSts}`)
  }
  if (presignWith !== undefined && presignWith !== 'session' && presignWith !== 'server-key') {
    throw new TypeError(
      `updraft: presignWith must be 'session' or 'server-key', got '${String(presignWith)}' (presignWith or S3_UPLOAD_PRESIGN_WITH)`,
    )
  }
  resolved.presignWith = presignWith ?? (noSts === undefined ? 'session' : 'server-key')
  // Only a default may change its mind, and only where a store other than AWS answers preflights.
  resolved.presignFallback =
    presignWith === undefined &&
    resolved.presignWith === 'session' &&
    resolved.endpoint !== undefined &&
    !isAws(resolved.endpoint)
  resolved.objectAcl = resolveObjectAcl(config.objectAcl, resolved.endpoint)
  if (config.copyGuard !== undefined && typeof config.copyGuard !== 'boolean') {
    throw new TypeError(`updraft: copyGuard must be true or false, got ${JSON.stringify(config.copyGuard)}`)
  }
  if (typeof resolved.formUploads !== 'boolean') {
    throw new TypeError(`updraft: formUploads must be true or false, got ${JSON.stringify(resolved.formUploads)}`)
  }
  // AWS refuses an unsigned x-amz-* header on a presigned request: nothing to guard there.
  resolved.copyGuard = config.copyGuard ?? (resolved.endpoint !== undefined && !isAws(resolved.endpoint))
  resolved.path = mountPath(resolved.path)
  checkKeyPrefix(resolved.keyPrefix)
  checkContentDisposition(resolved.contentDisposition)
  resolved.allowedObjectExtras = normalizeAllowance(resolved.allowedObjectExtras)
  for (const origin of resolved.allowedOrigins ?? []) checkOrigin(origin)
  checkNumber('multipartThreshold', resolved.multipartThreshold, 0)
  checkNumber('partSize', resolved.partSize, MIN_PART_SIZE)
  // SigV4 presigned URLs live at most 7 days.
  checkNumber('partUrlExpiresIn', resolved.partUrlExpiresIn, 1, 604_800)
  checkNumber('ticketTtlSeconds', resolved.ticketTtlSeconds, 1)
  if (resolved.maxFileSize !== undefined) checkNumber('maxFileSize', resolved.maxFileSize, 0)
  for (const [name, ms] of Object.entries(resolved.timeouts)) checkNumber(`timeouts.${name}`, ms, 1, 600_000)
  return resolved
}

/**
 * AssumeRole works wherever an STS answers it (AWS, RGW, MinIO: resolveConfig already insisted on
 * a roleArn). GetFederationToken exists only on AWS STS, so federation needs AWS itself or an STS
 * endpoint named on purpose; a custom store alone (R2, MinIO, RGW) cannot answer it. `info` (the
 * app's own knowledge, e.g. an embedded store) has the last word. A fact about the settings, kept
 * beside resolveConfig, which picks the `presignWith` default by it (info.ts reports it to pages).
 */
export function stsUnavailableReason({
  sts,
  endpoint,
  info,
}: Pick<ResolvedConfig, 'sts' | 'endpoint' | 'info'>): string | undefined {
  if (info?.tokenUnavailableReason !== undefined) return info.tokenUnavailableReason
  if (sts.mode === 'assume-role' || sts.endpoint !== undefined) return undefined
  if (endpoint === undefined || isAws(endpoint)) return undefined
  return (
    'GetFederationToken exists only on AWS STS; for this store set S3_UPLOAD_STS_MODE=assume-role ' +
    'and S3_UPLOAD_ROLE_ARN (RGW, MinIO), or S3_UPLOAD_STS_ENDPOINT'
  )
}

/** An amazonaws.com host, China's included. */
export const isAws = (endpoint: string) => /(^|\.)amazonaws\.com(\.cn)?$/.test(new URL(endpoint).hostname)

function resolveObjectAcl(acl: UploadHandlerConfig['objectAcl'], endpoint: string | undefined): CannedAcl | undefined {
  if (acl === false) return undefined
  if (acl === undefined) return endpoint === undefined || isAws(endpoint) ? 'bucket-owner-full-control' : 'private'
  if (!Object.hasOwn(CANNED_ACLS, acl)) {
    throw new TypeError(
      `updraft: objectAcl must be false or a canned ACL (${Object.keys(CANNED_ACLS).join(', ')}), got '${String(acl)}'`,
    )
  }
  return acl
}

/** An empty string is as good as unset: `S3_UPLOAD_KEY=` in a .env file configures nothing. */
function present<T>(value: T): Exclude<T, ''> | undefined {
  return value === '' || value === undefined || value === null ? undefined : (value as Exclude<T, ''>)
}

const definedOnly = <T extends object>(object: T): T =>
  Object.fromEntries(Object.entries(object).filter(([, value]) => value !== undefined)) as T
