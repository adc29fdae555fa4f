// What the server's own key (S3_UPLOAD_KEY) may do: the one answer the startup warning, `npx
// updraft-s3 doctor`, `setup-bucket` and the docs give. Every action below is one this server's
// code sends with that key (or one its STS credentials need the key to hold); a test
// (tests/unit/server-key-policy.test.ts) keeps the warning and the doctor in step with it.
import { isDirectoryBucket } from '../protocol/directory-session.ts'
import type { ResolvedConfig } from './config.ts'
import { tokenUnavailableReason } from './info.ts'
import { FEDERATED_USER_NAME, objectArn, UPLOAD_ACTIONS } from './sts.ts'

/** Which STS call (if any) the key makes: none (presigned mode only), GetFederationToken, or AssumeRole. */
export type KeyMode = 'presigned' | 'federation' | 'assume-role'

export interface KeyPolicyOptions {
  bucket: string
  /** The handler's `keyPrefix`. @default 'next-s3-uploads/' */
  keyPrefix?: string
  /** @default 'presigned' */
  mode?: KeyMode
  /** The handler's `resumable`: /list-parts (and token credentials) then list an upload's parts. @default false */
  resumable?: boolean
}

type Statement = { Effect: 'Allow'; Action: string | string[]; Resource: string }
export interface KeyPolicy {
  Version: '2012-10-17'
  Statement: Statement[]
}

/**
 * On objects under `keyPrefix`:
 * - s3:PutObject: a single PUT, CreateMultipartUpload, UploadPart and CompleteMultipartUpload all
 *   count as it (presigned URLs are signed with it; the server completes multipart uploads).
 * - s3:AbortMultipartUpload: /abort, token mode's /duplicates, the sweep.
 * - s3:GetObject: /complete's HeadObject and ranged GetObject (server/completion.ts), and the HEAD
 *   a retried /complete makes (server/multipart.ts).
 * - s3:DeleteObject: /complete deletes an object that fails its checks.
 * - s3:ListMultipartUploadParts, with `resumable`: /list-parts (server/list-parts.ts).
 * Token credentials get only what the key has (GetFederationToken intersects the two policies),
 * so these also cover what server/sts.ts grants them.
 */
export const OBJECT_ACTIONS = [...UPLOAD_ACTIONS, 's3:GetObject', 's3:DeleteObject']
export const RESUME_ACTION = 's3:ListMultipartUploadParts'
/** On the bucket: the sweep (server/sweep.ts) and /duplicates (server/refresh.ts) list pending multipart uploads. */
export const BUCKET_ACTION = 's3:ListBucketMultipartUploads'

/** Which STS call the config makes with the key: one for token mode, or to sign with a session (`presignWith: 'session'`). */
export function keyModeOf(config: ResolvedConfig): KeyMode {
  const callsSts = tokenUnavailableReason(config) === undefined || config.presignWith === 'session'
  if (!callsSts) return 'presigned'
  return config.sts.mode === 'assume-role' ? 'assume-role' : 'federation'
}

/** The least IAM policy the server's key needs, as an object (AWS IAM's JSON; MinIO and Ceph bucket policies take the same statements). */
export function serverKeyPolicy({
  bucket,
  keyPrefix = 'next-s3-uploads/',
  mode = 'presigned',
  resumable = false,
}: KeyPolicyOptions): KeyPolicy {
  if (isDirectoryBucket(bucket)) {
    // S3 Express One Zone: the server's SDK client and its presigner (server/directory-signer.ts)
    // work through CreateSession sessions; IAM grants per bucket, not per key.
    return {
      Version: '2012-10-17',
      Statement: [
        {
          Effect: 'Allow',
          Action: 's3express:CreateSession',
          Resource: `arn:aws:s3express:REGION:ACCOUNT_ID:bucket/${bucket}`,
        },
      ],
    }
  }
  const statements: Statement[] = [
    {
      Effect: 'Allow',
      Action: resumable ? [...OBJECT_ACTIONS, RESUME_ACTION] : [...OBJECT_ACTIONS],
      Resource: objectArn(bucket, `${keyPrefix}*`),
    },
    { Effect: 'Allow', Action: BUCKET_ACTION, Resource: `arn:aws:s3:::${bucket}` },
  ]
  if (mode === 'federation') {
    statements.push({
      Effect: 'Allow',
      Action: 'sts:GetFederationToken',
      Resource: `arn:aws:sts::ACCOUNT_ID:federated-user/${FEDERATED_USER_NAME}`,
    })
  }
  if (mode === 'assume-role')
    statements.push({ Effect: 'Allow', Action: 'sts:AssumeRole', Resource: 'arn:aws:iam::ACCOUNT_ID:role/ROLE_NAME' })
  return { Version: '2012-10-17', Statement: statements }
}

/** The same policy for a resolved config (its bucket, keyPrefix, resumable and STS mode). */
export const serverKeyPolicyFor = (config: ResolvedConfig): KeyPolicy =>
  serverKeyPolicy({
    bucket: config.bucket,
    keyPrefix: config.keyPrefix,
    mode: keyModeOf(config),
    resumable: config.resumable,
  })

/** The policy as the doctor prints it and the docs quote it: JSON, two-space indented. */
export const renderServerKeyPolicy = (options: KeyPolicyOptions): string =>
  JSON.stringify(serverKeyPolicy(options), null, 2)

/**
 * The policy in one line, for a log: `s3:PutObject, … on uploads/next-s3-uploads/*; s3:ListBucketMultipartUploads on uploads`.
 * Written from the statements themselves, so it cannot say less than the doctor prints.
 */
export function describeServerKeyPolicy(policy: KeyPolicy): string {
  return policy.Statement.map(
    ({ Action, Resource }) => `${[Action].flat().join(', ')} on ${Resource.replace(/^arn:aws:s3:::/, '')}`,
  ).join('; ')
}
