// `npx updraft-s3 setup-bucket`: adds the CORS rule and the lifecycle rule uploads need to the bucket,
// keeping the rules it already has, after showing the result (`--dry-run` only shows it).
import {
  type CORSRule,
  GetBucketCorsCommand,
  GetBucketLifecycleConfigurationCommand,
  type LifecycleRule,
  PutBucketCorsCommand,
  PutBucketLifecycleConfigurationCommand,
  type S3Client,
} from '@aws-sdk/client-s3'
import {
  abortsIncompleteUploads,
  CORS_HEADERS,
  CORS_METHODS,
  corsRule,
  LIFECYCLE_RULE_ID,
  lifecycleRule,
} from './bucket-rules.ts'
import { storeRefusal } from './storage-probe.ts'

export interface BucketPlan {
  cors: { rules: CORSRule[]; change: Change; note?: string }
  lifecycle: { rules: LifecycleRule[]; change: Change; note?: string }
}
/** `unsupported`: the store has no such call, so nothing is written. */
export type Change = 'none' | 'add' | 'unsupported'

export interface PlanChecks {
  /** Whether storage takes this key's signatures (storage-probe.ts `keySigns`): then a signature error on one call is the store's. @default true */
  signs?: boolean
  /** Whether a browser preflight from `origin` passes today: asked when the rules cannot be read, so a working rule is never replaced blind. */
  preflightPasses?: (origin: string) => Promise<boolean>
}

/**
 * Reads the bucket's rules and works out what to add: nothing where an existing rule already does
 * the job, a rule beside the existing ones where none does (never in their place), and nothing
 * for a call the store does not support.
 */
export async function planBucket(
  client: S3Client,
  bucket: string,
  origins: string[],
  keyPrefix: string,
  checks: PlanChecks = {},
): Promise<BucketPlan> {
  const { signs = true, preflightPasses } = checks
  const cors = await read(
    () => client.send(new GetBucketCorsCommand({ Bucket: bucket })).then((reply) => reply.CORSRules ?? []),
    'NoSuchCORSConfiguration',
    'GetBucketCors',
    signs,
  )
  const lifecycle = await read(
    () =>
      client.send(new GetBucketLifecycleConfigurationCommand({ Bucket: bucket })).then((reply) => reply.Rules ?? []),
    'NoSuchLifecycleConfiguration',
    'GetBucketLifecycleConfiguration',
    signs,
  )
  return { cors: await planCors(cors, origins, preflightPasses), lifecycle: planLifecycle(lifecycle, keyPrefix) }
}

async function planCors(
  { rules, failure }: Read<CORSRule>,
  origins: string[],
  preflightPasses?: (origin: string) => Promise<boolean>,
): Promise<BucketPlan['cors']> {
  if (failure) {
    // Unreadable rules are replaced whole by a write: only when a browser's preflight shows they do not already work.
    const passing = preflightPasses ? await Promise.all(origins.map(preflightPasses)) : []
    if (passing.length > 0 && passing.every(Boolean)) {
      return {
        rules: [],
        change: 'none',
        note: `${failure.reason}. A browser preflight from ${origins.join(', ')} already passes, so the bucket's rules stay as they are (npx updraft-s3 doctor also checks that ETag is exposed)`,
      }
    }
    if (failure.unsupported)
      return {
        rules: [],
        change: 'unsupported',
        note: `${failure.reason}. Nothing is written: set CORS as the store documents — MinIO's community edition in MINIO_API_CORS_ALLOW_ORIGIN, OpenStack Swift in its proxy-server.conf (npx updraft-s3 doctor shows the settings)`,
      }
    return {
      rules: [corsRule(origins)],
      change: 'add',
      note: `${failure.reason}. Writing this replaces whatever CORS rules the bucket has`,
    }
  }
  const missing = origins.filter((origin) => !rules.some((rule) => corsRuleAllows(rule, origin)))
  if (missing.length === 0)
    return { rules, change: 'none', note: `a rule already allows uploads from ${origins.join(', ')}` }
  const kept = rules.length === 0 ? '' : `, beside the ${rules.length} rule(s) already there, which stay`
  return { rules: [...rules, corsRule(missing)], change: 'add', note: `for ${missing.join(', ')}${kept}` }
}

function planLifecycle({ rules, failure }: Read<LifecycleRule>, keyPrefix: string): BucketPlan['lifecycle'] {
  if (failure?.unsupported) {
    return {
      rules: [],
      change: 'unsupported',
      note: `${failure.reason}. Nothing is written; uploads nobody finished keep their parts until aborted (the upload API's sweep, createUploadSweeper, aborts them where the store lists multipart uploads)`,
    }
  }
  const aborts = rules.find((rule) => abortsIncompleteUploads(rule, keyPrefix))
  if (aborts)
    return {
      rules,
      change: 'none',
      note: `rule "${aborts.ID ?? '(no id)'}" already aborts incomplete multipart uploads under ${keyPrefix}`,
    }
  const others = rules.filter((rule) => rule.ID !== LIFECYCLE_RULE_ID)
  const note = failure
    ? `${failure.reason}. Writing this replaces whatever lifecycle rules the bucket has`
    : `for keys under ${keyPrefix}${others.length === 0 ? '' : `, beside the ${others.length} rule(s) already there, which stay`}`
  return { rules: [...others, lifecycleRule(keyPrefix)], change: 'add', note }
}

/** What `setup-bucket` prints before it asks: each rule set, what changes and why, then the rules as they would be. */
export function describePlan(plan: BucketPlan): string[] {
  const head = (what: string, { change, note }: { change: Change; note?: string }) =>
    `${what}: ${{ none: 'unchanged', add: 'adding one', unsupported: 'not supported by this store' }[change]}${!note ? '' : note.startsWith('for ') ? ` ${note}` : `. ${note[0]!.toUpperCase()}${note.slice(1)}`}`
  const json = (value: unknown, shown: boolean) => (shown ? `:\n${JSON.stringify(value, null, 2)}` : '')
  return [
    `${head('CORS rules', plan.cors)}${json({ CORSRules: plan.cors.rules }, plan.cors.rules.length > 0)}\n`,
    `${head('Lifecycle rules', plan.lifecycle)}${json({ Rules: plan.lifecycle.rules }, plan.lifecycle.rules.length > 0)}\n`,
  ]
}

/** Writes what the plan adds; one line per rule set saying what happened, in words a person can act on. */
export async function applyBucketPlan(client: S3Client, bucket: string, plan: BucketPlan): Promise<string[]> {
  const lines: string[] = []
  if (plan.cors.change === 'add') {
    lines.push(
      await write(
        () =>
          client.send(new PutBucketCorsCommand({ Bucket: bucket, CORSConfiguration: { CORSRules: plan.cors.rules } })),
        'CORS rules',
        'MinIO (community edition) takes CORS origins only from MINIO_API_CORS_ALLOW_ORIGIN in its environment; OpenStack Swift only from its proxy-server.conf (cors_allow_origin and cors_expose_headers = etag under [DEFAULT], cors_preflight_allow_origin under [filter:s3api])',
      ),
    )
  } else
    lines.push(
      plan.cors.change === 'unsupported'
        ? 'CORS rules: not supported by this store; nothing written'
        : 'CORS rules: unchanged',
    )
  if (plan.lifecycle.change === 'add') {
    lines.push(
      await write(
        () =>
          client.send(
            new PutBucketLifecycleConfigurationCommand({
              Bucket: bucket,
              LifecycleConfiguration: { Rules: plan.lifecycle.rules },
            }),
          ),
        'Lifecycle rules',
        'MinIO aborts stale multipart uploads by itself (MINIO_API_STALE_UPLOADS_EXPIRY)',
      ),
    )
  } else
    lines.push(
      plan.lifecycle.change === 'unsupported'
        ? 'Lifecycle rules: not supported by this store; nothing written'
        : 'Lifecycle rules: unchanged',
    )
  return lines
}

/** Whether `rule` lets a page at `origin` upload: methods, headers, and ETag exposed. */
export function corsRuleAllows(rule: CORSRule, origin: string): boolean {
  const origins = rule.AllowedOrigins ?? []
  const headers = (rule.AllowedHeaders ?? []).map((header) => header.toLowerCase())
  return (
    (origins.includes('*') || origins.includes(origin)) &&
    CORS_METHODS.every((method) => rule.AllowedMethods?.includes(method)) &&
    (headers.includes('*') || CORS_HEADERS.every((header) => headers.includes(header))) &&
    (rule.ExposeHeaders ?? []).some((header) => header.toLowerCase() === 'etag')
  )
}

interface Read<T> {
  rules: T[]
  /** Why the rules could not be read; `unsupported` when it is the store, not the key (storage-probe.ts `storeRefusal`). */
  failure?: { reason: string; unsupported: boolean }
}

async function read<T>(get: () => Promise<T[]>, noneYet: string, call: string, signs: boolean): Promise<Read<T>> {
  try {
    return { rules: await get() }
  } catch (error) {
    if ((error as Error).name === noneYet) return { rules: [] }
    const refusal = storeRefusal(error as Error, call, signs)
    if (refusal) return { rules: [], failure: { reason: refusal, unsupported: true } }
    // AccessDenied, an unreachable store: the key or the network, which a person can fix.
    return {
      rules: [],
      failure: {
        reason: `the current rules could not be read (${(error as Error).name}: ${(error as Error).message.slice(0, 120)})`,
        unsupported: false,
      },
    }
  }
}

async function write(put: () => Promise<unknown>, what: string, unsupported: string): Promise<string> {
  try {
    await put()
    return `${what}: applied`
  } catch (error) {
    const name = (error as Error).name
    if (name === 'NotImplemented' || name === 'MethodNotAllowed')
      return `${what}: this store does not support setting them through the S3 API (${name}). ${unsupported}.`
    if (name === 'AccessDenied')
      return `${what}: refused (AccessDenied): run setup-bucket with the bucket owner's key (S3_UPLOAD_KEY/S3_UPLOAD_SECRET of an admin), not the server's least-privilege key.`
    return `${what}: failed: ${name}: ${(error as Error).message}`
  }
}
