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
import { abortsIncompleteUploads, CORS_HEADERS, CORS_METHODS, corsRule, LIFECYCLE_RULE_ID, lifecycleRule } from './bucket-rules.ts'

export interface BucketPlan {
  cors: { rules: CORSRule[]; change: 'none' | 'add'; note?: string }
  lifecycle: { rules: LifecycleRule[]; change: 'none' | 'add'; note?: string }
}

/** Reads the bucket's rules and works out what to add: nothing where an existing rule already does the job. */
export async function planBucket(client: S3Client, bucket: string, origins: string[], keyPrefix: string): Promise<BucketPlan> {
  const cors = await read(() => client.send(new GetBucketCorsCommand({ Bucket: bucket })).then((reply) => reply.CORSRules ?? []), 'NoSuchCORSConfiguration')
  const lifecycle = await read(
    () => client.send(new GetBucketLifecycleConfigurationCommand({ Bucket: bucket })).then((reply) => reply.Rules ?? []),
    'NoSuchLifecycleConfiguration',
  )
  const missingOrigins = origins.filter((origin) => !cors.rules.some((rule) => corsRuleAllows(rule, origin)))
  const aborts = lifecycle.rules.some((rule) => abortsIncompleteUploads(rule, keyPrefix))
  return {
    cors:
      missingOrigins.length === 0
        ? { rules: cors.rules, change: 'none' }
        : { rules: [...cors.rules, corsRule(missingOrigins)], change: 'add', ...(cors.note ? { note: cors.note } : {}) },
    lifecycle: aborts
      ? { rules: lifecycle.rules, change: 'none' }
      : { rules: [...lifecycle.rules.filter((rule) => rule.ID !== LIFECYCLE_RULE_ID), lifecycleRule()], change: 'add', ...(lifecycle.note ? { note: lifecycle.note } : {}) },
  }
}

/** Writes what the plan adds; one line per rule set saying what happened, in words a person can act on. */
export async function applyBucketPlan(client: S3Client, bucket: string, plan: BucketPlan): Promise<string[]> {
  const lines: string[] = []
  if (plan.cors.change === 'add') {
    lines.push(
      await write(() => client.send(new PutBucketCorsCommand({ Bucket: bucket, CORSConfiguration: { CORSRules: plan.cors.rules } })), 'CORS rules', 'MinIO (community edition) takes CORS origins only from MINIO_API_CORS_ALLOW_ORIGIN in its environment'),
    )
  } else lines.push('CORS rules: already allow these origins; unchanged')
  if (plan.lifecycle.change === 'add') {
    lines.push(
      await write(
        () => client.send(new PutBucketLifecycleConfigurationCommand({ Bucket: bucket, LifecycleConfiguration: { Rules: plan.lifecycle.rules } })),
        'Lifecycle rules',
        'MinIO aborts stale multipart uploads by itself (MINIO_API_STALE_UPLOADS_EXPIRY)',
      ),
    )
  } else lines.push('Lifecycle rules: one already aborts incomplete multipart uploads; unchanged')
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

async function read<T>(get: () => Promise<T[]>, noneYet: string): Promise<{ rules: T[]; note?: string }> {
  try {
    return { rules: await get() }
  } catch (error) {
    if ((error as Error).name === noneYet) return { rules: [] }
    // Not readable (AccessDenied, NotImplemented): writing replaces whatever is there.
    return { rules: [], note: `the current rules could not be read (${(error as Error).name}); applying replaces them` }
  }
}

async function write(put: () => Promise<unknown>, what: string, unsupported: string): Promise<string> {
  try {
    await put()
    return `${what}: applied`
  } catch (error) {
    const name = (error as Error).name
    if (name === 'NotImplemented' || name === 'MethodNotAllowed') return `${what}: this store does not support setting them through the S3 API (${name}). ${unsupported}.`
    if (name === 'AccessDenied') return `${what}: refused (AccessDenied): run setup-bucket with the bucket owner's key (S3_UPLOAD_KEY/S3_UPLOAD_SECRET of an admin), not the server's least-privilege key.`
    return `${what}: failed: ${name}: ${(error as Error).message}`
  }
}
