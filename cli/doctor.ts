// `npx updraft-s3 doctor`: checks, with the upload API's own settings (S3_UPLOAD_*), what uploads from a
// page need from storage, and says for each finding what to change on the store in use.
import { GetBucketCorsCommand, GetBucketLifecycleConfigurationCommand } from '@aws-sdk/client-s3'
import { isDirectoryBucket } from '../protocol/directory-session.ts'
import { xmlText } from '../protocol/xml.ts'
import type { ResolvedConfig } from '../server/config.ts'
import { stsName, unreachableCode } from '../server/config-faults.ts'
import { credentialSource, credentialsOf, isTemporary, type ResolvedCredentials } from '../server/credentials.ts'
import { createFormCheck } from '../server/form-check.ts'
import { serverInfo } from '../server/info.ts'
import { serverKeyPolicyFor } from '../server/key-policy.ts'
import { isLocalStore } from '../server/local-store.ts'
import { createFormPresigner } from '../server/presigned-form.ts'
import { objectHeaders } from '../server/presigned-urls.ts'
import { createSessionSigner } from '../server/session-signer.ts'
import { createS3Client } from '../server/storage.ts'
import { createTokenIssuer, FEDERATION_NEEDS_USER_KEY } from '../server/sts.ts'
import {
  abortsIncompleteUploads,
  CORS_METHODS,
  corsFix,
  fixesFor,
  lifecycleFix,
  type Provider,
  providerName,
  SWIFT_CORS_PLACE,
  swiftCorsConfig,
  TOKEN_HEADERS,
} from './bucket-rules.ts'
import { diagnosePresignPreflight, presignPreflights } from './presign-check.ts'
import { type ProbeReply, type StorageProbe, storageProbe, storeRefusal } from './storage-probe.ts'

export type Status = 'ok' | 'warn' | 'fail' | 'skip'
export type CheckName =
  | 'credentials'
  | 'access'
  | 'clock'
  | 'cors'
  | 'presign'
  | 'expose-etag'
  | 'lifecycle'
  | 'least-privilege'
  | 'forms'
  | 'sts'

export interface Finding {
  check: CheckName
  status: Status
  /** What was found, in plain words. */
  summary: string
  /** What to change, with the exact JSON or command for the store in use. */
  fix?: string
}

export interface DoctorOptions {
  /** The page's origin, e.g. `https://app.example.com`. */
  origin: string
  /** Which store's commands to print; detected from the storage endpoint when it tells. */
  provider?: Provider
}

/** Beyond this, AWS refuses signatures (RequestTimeTooSkewed); other stores use the same window. */
const MAX_SKEW_MS = 15 * 60_000
const WARN_SKEW_MS = 60_000

/** Runs every check; never throws for what storage answers (a finding says it), only for a bad config. */
export async function runDoctor(
  config: ResolvedConfig,
  { origin, provider: given }: DoctorOptions,
): Promise<Finding[]> {
  const found = await credentialsOf(createS3Client(config))().then(
    (credentials) => ({ credentials }),
    (error: Error) => ({ error }),
  )
  if ('error' in found) {
    return [
      credentialsFinding(config, found),
      ...(
        ['access', 'clock', 'cors', 'presign', 'expose-etag', 'lifecycle', 'least-privilege', 'forms', 'sts'] as const
      ).map((check): Finding => ({ check, status: 'skip', summary: 'needs credentials first' })),
    ]
  }
  const probe = storageProbe(config, found.credentials)
  const target = { bucket: config.bucket, endpoint: config.endpoint, origins: [origin], keyPrefix: config.keyPrefix }
  const start = await attempt(() => probe.signed('POST', probe.url(undefined, '?uploads'), { origin }))
  const provider = given ?? (start.reply && storeFromReply(start.reply))
  const fixes = (make: (p: Provider) => string) => fixesFor(config.endpoint, make, provider)
  const findings: Finding[] = [credentialsFinding(config, found)]

  const access = await accessFinding(config, probe, start, fixes)
  findings.push(access, clockFinding(start))
  if (access.status === 'fail') {
    // Nothing more to learn about a bucket the key cannot reach.
    for (const check of ['cors', 'presign', 'expose-etag', 'lifecycle', 'least-privilege', 'forms'] as const) {
      findings.push({ check, status: 'skip', summary: 'needs the access check to pass first' })
    }
  } else {
    findings.push(
      await corsFinding(config, probe, origin, pageHeaders(config), (p) => corsFix(p, target), fixes, provider),
    )
    findings.push(
      await presignFinding(
        config,
        origin,
        fixes((p) => corsFix(p, target)),
      ),
    )
    findings.push(exposeEtagFinding(await exposeProbe(probe, start, origin), origin, (p) => corsFix(p, target), fixes))
    findings.push(await lifecycleFinding(config, (p) => lifecycleFix(p, target), fixes))
    findings.push(await leastPrivilegeFinding(config, probe))
    findings.push(await formsFinding(config))
  }
  findings.push(await stsFinding(config))
  return findings
}

/**
 * Whether storage enforces POST policies, as the upload API checks before its first form
 * (`formUploads`, server/form-check.ts): an honest form stored, three lying ones refused.
 */
async function formsFinding(config: ResolvedConfig): Promise<Finding> {
  const check = 'forms'
  if (isDirectoryBucket(config.bucket))
    return { check, status: 'skip', summary: 'a directory bucket: S3 Express has no POST Object' }
  const said: string[] = []
  const listening = {
    ...config,
    logger: { ...config.logger, warn: (_: object, message?: string) => void said.push(message ?? '') },
  }
  const s3 = createS3Client(config)
  try {
    const signer = createSessionSigner(listening, undefined, s3)
    if (await createFormCheck(listening, createFormPresigner(listening, signer), s3)()) {
      return {
        check,
        status: 'ok',
        summary: `storage enforces POST policies: formUploads ${config.formUploads ? 'hands out' : 'can hand out'} POST forms (one CORS preflight per page rather than one per file)`,
      }
    }
  } finally {
    s3.destroy()
  }
  // The check's own words, without its "formUploads is on" preamble.
  const why = said.at(-1)?.replace(/^updraft: formUploads is on, but /, '') ?? 'storage does not enforce POST policies'
  return config.formUploads
    ? {
        check,
        status: 'warn',
        summary: why,
        fix: 'Leave formUploads off for this store: the upload API hands out PUT URLs anyway.',
      }
    : { check, status: 'ok', summary: `${why.replace(/: pages get presigned PUT URLs$/, '')}: leave formUploads off` }
}

export type Attempt = { reply: ProbeReply; error?: undefined } | { reply?: undefined; error: Error }
const attempt = (send: () => Promise<ProbeReply>): Promise<Attempt> =>
  send().then(
    (reply) => ({ reply }),
    (error: Error) => ({ error }),
  )
const said = ({ status, code }: ProbeReply) => `HTTP ${status}${code ? ` ${code}` : ''}`

async function accessFinding(
  config: ResolvedConfig,
  probe: StorageProbe,
  start: Attempt,
  fixes: (make: (p: Provider) => string) => string,
): Promise<Finding> {
  const check = 'access'
  if (start.error) {
    const unreachable = unreachableCode(start.error)
    const summary = unreachable
      ? `could not reach storage at ${new URL(probe.bucketUrl()).origin} (${unreachable}${unreachable === 'ECONNREFUSED' ? ': nothing listens there' : ''})`
      : `storage did not answer at ${probe.bucketUrl()}: ${start.error.message}`
    return {
      check,
      status: 'fail',
      summary,
      fix: 'Check S3_UPLOAD_ENDPOINT (and S3_UPLOAD_REGION for AWS), that the store is running, and that this machine can reach it.',
    }
  }
  const { reply } = start
  const uploadId = xmlText(reply.body, 'UploadId')
  if (reply.status === 200 && uploadId) {
    const abort = await attempt(() =>
      probe.signed('DELETE', probe.url(undefined, `?uploadId=${encodeURIComponent(uploadId)}`)),
    )
    if (abort.reply && abort.reply.status < 300) {
      return {
        check,
        status: 'ok',
        summary: `bucket "${config.bucket}" exists and the key can start and abort a multipart upload in it`,
      }
    }
    return {
      check,
      status: 'warn',
      summary: `the key can start uploads in "${config.bucket}", but AbortMultipartUpload answered ${abort.reply ? said(abort.reply) : abort.error.message}: failed or aborted uploads leave their parts behind`,
      fix: `Allow s3:AbortMultipartUpload to the server's key (see the IAM policy under least-privilege), and keep the lifecycle rule that aborts forgotten uploads.`,
    }
  }
  const fix =
    {
      // A typo is likelier than a bucket nobody created: spelling first, then the command.
      NoSuchBucket: `Check the spelling of S3_UPLOAD_BUCKET ("${config.bucket}"). If it is right, create the bucket:\n${fixes((p) => createBucketFix(p, config))}`,
      InvalidAccessKeyId:
        'S3_UPLOAD_KEY is not a key this store knows: copy the access key id again (for R2, B2 and MinIO, an S3 API key of that store).',
      SignatureDoesNotMatch:
        'S3_UPLOAD_SECRET does not belong to S3_UPLOAD_KEY: copy the secret again; check S3_UPLOAD_REGION too.',
      RequestTimeTooSkewed: "This machine's clock is off: see the clock finding.",
      AccessDenied: `The key may not write "${config.bucket}/${config.keyPrefix}*" (RGW also says AccessDenied for a wrong secret). Give it this IAM policy (AWS; MinIO and Ceph bucket policies take the same statements):\n${keyPolicyJson(config)}`,
    }[reply.code ?? ''] ?? `Storage refused CreateMultipartUpload: ${reply.body.slice(0, 300)}`
  const summary =
    reply.code === 'NoSuchBucket'
      ? `bucket "${config.bucket}" does not exist`
      : `storage refused the key's CreateMultipartUpload: ${said(reply)}`
  return { check, status: 'fail', summary, fix }
}

function createBucketFix(provider: Provider, { bucket, region, endpoint }: ResolvedConfig): string {
  switch (provider) {
    case 'aws':
      return `aws s3api create-bucket --bucket ${bucket} --region ${region}${region === 'us-east-1' ? '' : ` --create-bucket-configuration LocationConstraint=${region}`}`
    case 'r2':
      return `npx wrangler r2 bucket create ${bucket}`
    case 'b2':
      return `b2 bucket create ${bucket} allPrivate`
    case 'minio':
      return `mc mb ALIAS/${bucket}`
    case 'ceph':
    case 'swift':
      return `aws s3api create-bucket --bucket ${bucket} --endpoint-url ${endpoint}`
  }
}

export function clockFinding(start: Attempt): Finding {
  const check = 'clock'
  const date = start.reply?.headers.get('date')
  if (!date) return { check, status: 'skip', summary: 'storage sent no Date header to compare with' }
  // Date has whole seconds: a difference under 1 s is no difference.
  const skew = Date.parse(date) - Date.now()
  const seconds = Math.round(skew / 1000)
  const fix =
    "Synchronise this machine's clock (e.g. timedatectl set-ntp true, or chrony/ntpd): SigV4 signatures carry the signing time."
  if (Math.abs(skew) > MAX_SKEW_MS)
    return {
      check,
      status: 'fail',
      summary: `this machine's clock is ${seconds} s off storage's: storage refuses signatures (RequestTimeTooSkewed)`,
      fix,
    }
  if (Math.abs(skew) > WARN_SKEW_MS)
    return {
      check,
      status: 'warn',
      summary: `this machine's clock is ${seconds} s off storage's (refused beyond 15 minutes)`,
      fix,
    }
  return { check, status: 'ok', summary: `clock in step with storage (${seconds} s apart)` }
}

/** The headers this upload API's pages send to storage: those its presigned URLs sign, and token mode's SigV4 ones. */
export function pageHeaders(config: ResolvedConfig): string[] {
  const headers = Object.keys(objectHeaders(config, 'application/octet-stream')).map((name) => name.toLowerCase())
  return serverInfo(config).token ? [...headers, ...TOKEN_HEADERS] : headers
}

async function corsFinding(
  config: ResolvedConfig,
  probe: StorageProbe,
  origin: string,
  headers: string[],
  corsFixFor: (p: Provider) => string,
  fixes: (make: (p: Provider) => string) => string,
  provider?: Provider,
): Promise<Finding> {
  const refused = await preflightRefusals(probe, origin, headers)
  // A store whose S3 API has no bucket CORS keeps it in its server's config: say where.
  // (Through the SDK: a raw signed GET ?cors to Swift gets its 501 headers but never the body's end.)
  const client = createS3Client(config)
  const bucketCors = await client.send(new GetBucketCorsCommand({ Bucket: config.bucket })).then(
    () => ({ status: 200 }),
    (error: Error & { $metadata?: { httpStatusCode?: number } }) => ({
      status: error.$metadata?.httpStatusCode ?? 0,
      code: error.name,
    }),
  )
  client.destroy()
  return corsVerdict({ origin, refused, bucketCors, provider, fix: fixes(corsFixFor) })
}

/**
 * The CORS finding from what storage answered: the preflights' refusals, and its reply to
 * GetBucketCors. A 501 NotImplemented there means CORS is not the bucket's but the server's
 * (OpenStack Swift's proxy-server.conf, MinIO's environment): the fix says where, and on Swift
 * the finding warns even when CORS works, as its error replies reach no page.
 */
export function corsVerdict({
  origin,
  refused,
  bucketCors,
  provider,
  fix,
}: {
  origin: string
  refused: string[]
  /** GetBucketCors's outcome: its status, and the error code when it failed. */
  bucketCors?: { status: number; code?: string }
  provider?: Provider
  fix: string
}): Finding {
  const check = 'cors'
  const allowed = `a browser preflight from ${origin} is allowed for ${CORS_METHODS.join(', ')} with the headers uploads send`
  const noBucketCors = bucketCors?.status === 501 || bucketCors?.code === 'NotImplemented'
  if (!noBucketCors) {
    if (refused.length === 0) return { check, status: 'ok', summary: allowed }
    return {
      check,
      status: 'fail',
      summary: `the bucket's CORS refuses uploads from ${origin} (${refused.join('; ')})`,
      fix,
    }
  }
  const where = provider === 'swift' || provider === 'minio' ? [provider] : (['swift', 'minio'] as const)
  const serverFix = where
    .map((store) =>
      store === 'swift'
        ? `${SWIFT_CORS_PLACE}:\n${swiftCorsConfig([origin])}`
        : `${providerName('minio')}:\n${corsFix('minio', { bucket: '', origins: [origin], keyPrefix: '' })}`,
    )
    .join('\n\n')
  const store = provider ? providerName(provider) : 'this store'
  if (refused.length > 0) {
    return {
      check,
      status: 'fail',
      summary: `${store} refuses uploads from ${origin} (${refused.join('; ')}), and its S3 API has no bucket CORS (GetBucketCors answered ${bucketCors!.status}${bucketCors!.code ? ` ${bucketCors!.code}` : ''}): CORS is set in the server's configuration`,
      fix: serverFix,
    }
  }
  if (provider !== 'swift')
    return {
      check,
      status: 'ok',
      summary: `${allowed} (set in the server's configuration: its S3 API has no bucket CORS)`,
    }
  return {
    check,
    status: 'warn',
    summary: `${allowed}, from Swift's proxy config (its S3 API has no bucket CORS); but Swift's error replies carry no CORS headers, so a page sees a refused upload (an expired URL, a wrong signature, a denied key) only as a network error`,
    fix: `Nothing to change for uploads that succeed. When a page reports a network error, read Swift's proxy log for the refusal. The CORS settings live here:\n${swiftCorsConfig([origin])}`,
  }
}

/** OpenStack Swift names itself in every reply (X-Openstack-Request-Id, X-Trans-Id); other stores do not tell. */
export const storeFromReply = (reply: ProbeReply): Provider | undefined =>
  reply.headers.has('x-openstack-request-id') ? 'swift' : undefined

/** A browser's preflight from `origin` for each method uploads use, with `headers`: what storage refuses, empty when it allows all. */
export async function preflightRefusals(probe: StorageProbe, origin: string, headers: string[]): Promise<string[]> {
  const refused: string[] = []
  for (const method of CORS_METHODS) {
    // To a presigned URL, as a page's preflight goes: Swift's S3 layer takes an OPTIONS for its own
    // only when the URL carries X-Amz-Credential or the request headers include authorization.
    const preflight = await attempt(async () =>
      probe.plain('OPTIONS', await probe.presign(method, probe.url()), {
        origin,
        'access-control-request-method': method,
        'access-control-request-headers': headers.join(','),
      }),
    )
    if (preflight.error) {
      refused.push(`${method}: ${preflight.error.message}`)
      continue
    }
    const { reply } = preflight
    const allowOrigin = reply.headers.get('access-control-allow-origin')
    const allowMethods = (reply.headers.get('access-control-allow-methods') ?? '').toUpperCase()
    const allowHeaders = (reply.headers.get('access-control-allow-headers') ?? '').toLowerCase()
    const missingHeaders = allowHeaders.includes('*')
      ? []
      : headers.filter((name) => !allowHeaders.split(/\s*,\s*/).includes(name))
    if (reply.status >= 300) refused.push(`${method}: preflight answered ${said(reply)}`)
    else if (allowOrigin !== origin && allowOrigin !== '*') refused.push(`${method}: origin ${origin} not allowed`)
    else if (!allowMethods.includes(method)) refused.push(`${method}: method not allowed`)
    else if (missingHeaders.length > 0) refused.push(`${method}: headers not allowed: ${missingHeaders.join(', ')}`)
  }
  return refused
}

/** A real preflight for URLs signed as the upload API signs them (cli/presign-check.ts). */
async function presignFinding(config: ResolvedConfig, origin: string, corsFixText: string): Promise<Finding> {
  const check = 'presign'
  if (isDirectoryBucket(config.bucket))
    return { check, status: 'skip', summary: 'a directory bucket: its URLs are signed with CreateSession sessions' }
  try {
    return diagnosePresignPreflight(config, origin, await presignPreflights(config, origin), corsFixText)
  } catch (error) {
    return {
      check,
      status: 'fail',
      summary:
        `could not sign a URL as the upload API does, or send its preflight: ${(error as Error).name}: ${(error as Error).message}`.slice(
          0,
          400,
        ),
      fix:
        config.presignWith === 'session'
          ? 'See the sts finding: the session credential that signs presigned URLs comes from STS.'
          : 'Check that this machine can reach storage.',
    }
  }
}

/**
 * The reply to read exposed headers from: CreateMultipartUpload's, unless it carries no CORS
 * headers at all. Swift's S3 layer adds them only to replies its object server makes (a PUT, not
 * POST ?uploads), so then a signed PUT of an empty probe object asks again; the object is removed.
 */
async function exposeProbe(probe: StorageProbe, start: Attempt, origin: string): Promise<Attempt> {
  if (!start.reply || start.reply.status >= 300 || start.reply.headers.has('access-control-allow-origin')) return start
  const url = probe.url()
  const put = await attempt(() => probe.signed('PUT', url, { origin }))
  await attempt(() => probe.signed('DELETE', url))
  return put.reply && put.reply.status < 300 ? put : start
}

function exposeEtagFinding(
  start: Attempt,
  origin: string,
  corsFixFor: (p: Provider) => string,
  fixes: (make: (p: Provider) => string) => string,
): Finding {
  const check = 'expose-etag'
  if (!start.reply || start.reply.status >= 300)
    return { check, status: 'skip', summary: 'no upload could be started to see which headers storage exposes' }
  const exposed = (start.reply.headers.get('access-control-expose-headers') ?? '').toLowerCase().split(/\s*,\s*/)
  if (exposed.includes('etag') || exposed.includes('*'))
    return { check, status: 'ok', summary: `ETag is exposed to pages from ${origin}` }
  return {
    check,
    status: 'fail',
    summary: `storage does not expose ETag to pages from ${origin}: multipart uploads fail, as the page cannot read part ETags`,
    fix: `Add ExposeHeaders: ["ETag"] to the CORS rule.\n${fixes(corsFixFor)}`,
  }
}

async function lifecycleFinding(
  config: ResolvedConfig,
  fixFor: (p: Provider) => string,
  fixes: (make: (p: Provider) => string) => string,
): Promise<Finding> {
  const check = 'lifecycle'
  const client = createS3Client(config)
  try {
    const { Rules = [] } = await client.send(new GetBucketLifecycleConfigurationCommand({ Bucket: config.bucket }))
    const aborts = Rules.find((rule) => abortsIncompleteUploads(rule, config.keyPrefix))
    if (aborts)
      return {
        check,
        status: 'ok',
        summary: `rule "${aborts.ID ?? '(no id)'}" aborts incomplete multipart uploads after ${aborts.AbortIncompleteMultipartUpload!.DaysAfterInitiation} day(s)`,
      }
    return {
      check,
      status: 'fail',
      summary:
        'no lifecycle rule aborts incomplete multipart uploads: parts of uploads from closed tabs stay (and are billed) for ever',
      fix: fixes(fixFor),
    }
  } catch (error) {
    const name = (error as Error).name
    if (name === 'NoSuchLifecycleConfiguration') {
      return {
        check,
        status: 'fail',
        summary: 'the bucket has no lifecycle rules: parts of uploads from closed tabs stay (and are billed) for ever',
        fix: fixes(fixFor),
      }
    }
    if (name === 'AccessDenied') {
      return {
        check,
        status: 'warn',
        summary:
          "the server key may not read lifecycle rules (it does not need to): check them with the bucket owner's key, or run npx updraft-s3 setup-bucket with it",
      }
    }
    // Only asked once the access check passed: storage takes this key's signatures.
    const unsupported = storeRefusal(error as Error, 'GetBucketLifecycleConfiguration (reading lifecycle rules)', true)
    if (unsupported) {
      return {
        check,
        status: 'warn',
        summary: `${unsupported}. Without a lifecycle rule, parts of uploads nobody finished stay until they are aborted`,
        fix: `Abort them another way: the upload API's sweep (createUploadSweeper, or the Fastify plugin's sweepEverySeconds) where the store lists multipart uploads, or what the store documents. A store for development only (s3rver) can be left as it is.`,
      }
    }
    return {
      check,
      status: 'warn',
      summary: `could not read lifecycle rules: ${name}: ${(error as Error).message}`.slice(0, 300),
    }
  } finally {
    client.destroy()
  }
}

async function leastPrivilegeFinding(config: ResolvedConfig, probe: StorageProbe): Promise<Finding> {
  const check = 'least-privilege'
  if (isLocalStore(config)) {
    return {
      check,
      status: 'ok',
      summary:
        's3rver has one key and enforces no IAM policy: expected for the local store (on a real store, this check asks for a key that may only upload)',
    }
  }
  const policy = keyPolicyJson(config)
  // A missing key answers 404 (or a 2xx to DELETE) only to a key allowed to read or delete it; 403 otherwise.
  const allowed = async (send: () => Promise<ProbeReply>) => {
    const { reply } = await attempt(send)
    return !!reply && (reply.status < 300 || reply.code === 'NoSuchKey' || reply.status === 404)
  }
  // /complete reads an upload's object (HEAD, a ranged GET) and deletes one that fails its check.
  // Asked of a real (empty) object: for a missing one, a key without s3:ListBucket hears 403 either way.
  const inside = probe.url()
  const missing: string[] = []
  if ((await attempt(() => probe.signed('PUT', inside))).reply?.status === 200) {
    if (!(await allowed(() => probe.signed('HEAD', inside)))) missing.push('read')
    if (!(await allowed(() => probe.signed('DELETE', inside)))) missing.push('delete')
  }
  if (missing.length > 0) {
    return {
      check,
      status: 'fail',
      summary: `the server key may not ${missing.join(' or ')} objects under ${config.keyPrefix}: /complete cannot check uploads, so every upload from this engine fails there`,
      fix: `Give the server key s3:GetObject and s3:DeleteObject on its uploads, as in this policy:\n${policy}`,
    }
  }
  const outsideKey = `updraft-doctor-outside-${crypto.randomUUID()}`
  const outside = probe.url(outsideKey)
  const probes = [
    ['list the bucket', () => probe.signed('GET', probe.bucketUrl('?list-type=2&max-keys=1'))],
    ...(outsideKey.startsWith(config.keyPrefix)
      ? []
      : ([
          ['read objects outside keyPrefix', () => probe.signed('GET', outside)],
          ['delete objects outside keyPrefix', () => probe.signed('DELETE', outside)],
        ] as const)),
  ] as const
  const excess: string[] = []
  for (const [what, send] of probes) if (await allowed(send)) excess.push(what)
  if (excess.length === 0)
    return {
      check,
      status: 'ok',
      summary: `the server key cannot list the bucket, nor read or delete objects outside ${config.keyPrefix}`,
    }
  return {
    check,
    status: 'warn',
    summary: `the server key can ${excess.join(', ')}: more than uploads need; a leaked key (or a bug) could expose or destroy objects`,
    fix:
      `Give the server its own key with only this policy (AWS IAM; MinIO: mc admin policy create; Ceph: a user of its own plus a bucket policy with these statements):\n${policy}\n` +
      'R2: an API token with "Object Read & Write" on this bucket only (R2 has no write-only token). B2: b2 key create --bucket BUCKET updraft writeFiles',
  }
}

/** Which credentials the server runs on, from where, and until when (temporary ones renew on their own). */
export function credentialsFinding(
  config: ResolvedConfig,
  found: { credentials: ResolvedCredentials } | { error: Error },
): Finding {
  const check = 'credentials'
  if ('error' in found) {
    return {
      check,
      status: 'fail',
      summary: `no credentials found: ${found.error.message}`.slice(0, 400),
      fix:
        'Set S3_UPLOAD_KEY and S3_UPLOAD_SECRET (a static key: R2, B2, MinIO, Ceph, or an IAM user on AWS), or run where the AWS SDK finds ' +
        'credentials (AWS_ACCESS_KEY_ID, AWS_PROFILE, a web identity token, ECS/EKS container credentials, EC2 instance metadata).',
    }
  }
  const { credentials } = found
  const until = credentials.expiration
    ? `, temporary, valid until ${credentials.expiration.toISOString()} (renewed before then)`
    : ''
  const summary = `key ${credentials.accessKeyId.slice(0, 4)}… from ${credentialSource(credentials)}${until}`
  if (isTemporary(credentials) && config.sts.mode === 'federation' && serverInfo(config).token) {
    return {
      check,
      status: 'warn',
      summary: `${summary}; token mode cannot work with them`,
      fix: FEDERATION_NEEDS_USER_KEY.replace(/^updraft: /, ''),
    }
  }
  return { check, status: 'ok', summary }
}

async function stsFinding(config: ResolvedConfig): Promise<Finding> {
  const check = 'sts'
  const info = serverInfo(config)
  if (!info.token && isLocalStore(config))
    return {
      check,
      status: 'skip',
      summary: 'token mode is off: s3rver has no STS, as expected for the local store (presigned mode needs none)',
    }
  if (!info.token)
    return {
      check,
      status: 'skip',
      summary: `token mode is off: ${info.tokenUnavailableReason} (presigned mode needs no STS)`,
    }
  try {
    const credentials = await createTokenIssuer(config)(`${config.keyPrefix}updraft-doctor-${crypto.randomUUID()}`)
    const mode = config.sts.mode === 'assume-role' ? 'AssumeRole' : 'GetFederationToken'
    return {
      check,
      status: 'ok',
      summary: `STS issues upload credentials (${mode}${credentials.Expiration ? `, valid until ${credentials.Expiration}` : ''})`,
    }
  } catch (error) {
    // Not reached is not refused: the address first, before any policy advice.
    const unreachable = unreachableCode(error)
    if (unreachable) {
      return {
        check,
        status: 'fail',
        summary: `could not reach ${stsName(config)} (${unreachable}): no upload credentials can be issued`,
        fix: config.sts.endpoint
          ? `Check S3_UPLOAD_STS_ENDPOINT (${config.sts.endpoint}; in assume-role mode it defaults to S3_UPLOAD_ENDPOINT), and that this machine can reach it. Or use presigned mode, which needs no STS.`
          : 'Check S3_UPLOAD_REGION, and that this machine can reach AWS STS. Or use presigned mode, which needs no STS.',
      }
    }
    return {
      check,
      status: 'fail',
      summary: `STS refused to issue upload credentials: ${(error as Error).name}: ${(error as Error).message}`.slice(
        0,
        400,
      ),
      fix:
        (error as Error).message === FEDERATION_NEEDS_USER_KEY
          ? FEDERATION_NEEDS_USER_KEY.replace(/^updraft: /, '')
          : `The server's key needs (AWS IAM):\n${keyPolicyJson(config)}\nFor assume-role, the role's trust policy must name this key's user. Or use presigned mode, which needs no STS.`,
    }
  }
}

/** The server key's policy (server/key-policy.ts), as the startup warning names it. */
export const keyPolicyJson = (config: ResolvedConfig) => JSON.stringify(serverKeyPolicyFor(config), null, 2)
