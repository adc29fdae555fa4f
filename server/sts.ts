import { AssumeRoleCommand, type Credentials, GetFederationTokenCommand, STSClient } from '@aws-sdk/client-sts'
import type { StsCredentials } from '../protocol/wire.ts'
import { boundedRequests, NAMING_TIMEOUTS, namingTimeouts } from './bounds.ts'
import type { ResolvedConfig } from './config.ts'
import { isTemporary, type ServerCredentials } from './credentials.ts'
import { RequestError } from './request-error.ts'

/** next-s3-upload's name for the federated user; shows up in CloudTrail. */
export const FEDERATED_USER_NAME = 'S3UploadWebToken'
/** Also the RoleSessionName in assume-role mode (RGW wants at least 2 characters). */
export const ROLE_SESSION_NAME = FEDERATED_USER_NAME
export const TOKEN_DURATION_SECONDS = 60 * 60

/**
 * Ceph 16.2's radosgw crashes on session policies of ~1700 characters or more (measured; the
 * repository's ARCHITECTURE.md): a policy longer than this is refused before it is sent, so no
 * page can take the store down with a long file name.
 */
export const MAX_SESSION_POLICY_LENGTH = 1536

/** The actions one upload needs: PutObject (single, and every multipart step but abort) and the engine's cleanup. */
export const UPLOAD_ACTIONS = ['s3:PutObject', 's3:AbortMultipartUpload']
/** …and, with `resumable`, asking which parts storage holds, to carry an upload on after a reload. */
const RESUME_ACTIONS = [...UPLOAD_ACTIONS, 's3:ListMultipartUploadParts']

type Statement = Record<string, unknown>

/**
 * What a PutObject may not carry, for stores that apply headers a policy does not mention.
 * Measured on Ceph RGW 16.2 (tests/security-token-policy.test.ts): these conditions refuse a
 * single PutObject carrying a public canned ACL or a grant header; RGW does not evaluate them for
 * CreateMultipartUpload, and no condition it evaluates matches arbitrary `x-amz-tagging` keys or
 * refuses STS calls (docs/security.md names the deployment rules that close those). On AWS
 * these headers already need permissions the policy does not grant.
 */
const REFUSED_PUT_HEADERS: Statement[] = [
  denyPut({ StringEquals: { 's3:x-amz-acl': ['public-read', 'public-read-write', 'authenticated-read'] } }),
  // One statement per header: keys in one condition block must all match.
  denyPut({ StringLike: { 's3:x-amz-grant-read': '*' } }),
  denyPut({ StringLike: { 's3:x-amz-grant-full-control': '*' } }),
  denyPut({ StringLike: { 's3:x-amz-grant-write-acp': '*' } }),
]

/**
 * The inline policy of one upload's credentials: the upload actions on the one key, and the
 * headers above refused. Built as a list of statements so another Allow adds cleanly.
 * Kept compact (see MAX_SESSION_POLICY_LENGTH).
 */
export function uploadPolicy(bucket: string, key: string, resumable = false, policyVariables = true): string {
  const actions = resumable ? RESUME_ACTIONS : UPLOAD_ACTIONS
  checkTokenKey(key, policyVariables)
  return policyDocument([allow(actions, objectArn(bucket, escapePolicyWildcards(key))), ...REFUSED_PUT_HEADERS])
}

/**
 * What a token policy cannot name exactly on a store without IAM policy variables (Ceph RGW 16.2,
 * `sts.policyVariables: false`), probed there over every printable ASCII character and a few others
 * (tests/security-token-policy.test.ts):
 * - `*` and `?` are wildcards in a Resource and `${…}` a policy variable: a key holding one can be
 *   named exactly only with the `${*}`-style escapes, which RGW reads literally — the credentials
 *   would allow `custom/a${*}b.png`, a key nobody issued;
 * - `:` ends an ARN's field: RGW's policy parser discards a Resource holding one after the
 *   bucket ("Supplied resource is discarded") and AssumeRole answers 400, which the page saw as a
 *   bare 500.
 * Every other character is named exactly.
 */
const UNNAMEABLE = /[*?$:]/

/**
 * A key token credentials can be scoped to on this store, or a 400 saying what to change, before
 * anything is created or issued, never written in a form the store reads differently.
 */
export function checkTokenKey(key: string, policyVariables: boolean): void {
  const character = key.match(UNNAMEABLE)?.[0]
  if (policyVariables || character === undefined) return
  const why =
    character === ':'
      ? "the store's policy parser discards a resource holding ':'"
      : 'it has no IAM policy variables to write it literally, so the policy would name another key'
  throw new RequestError(
    400,
    `The object key ${JSON.stringify(key)} holds '${character}', which token credentials cannot name on this store: ${why}. ` +
      `Upload with strategy 'presigned', or have the server's key callback return keys without * ? $ : (sanitizeFilename drops them)`,
  )
}

/**
 * The policy of the session credential that signs presigned URLs: the upload actions under the
 * key prefix, nothing else, so a header a page adds to a URL (`x-amz-copy-source` → a copy made
 * with the signer's rights, `UploadPartCopy`) finds no permission to read anything.
 */
export function presignPolicy(bucket: string, keyPrefix: string): string {
  // resolveConfig refused wildcards in the prefix: the `*` here is the only one.
  return policyDocument([allow(UPLOAD_ACTIONS, objectArn(bucket, `${keyPrefix}*`))])
}

const policyDocument = (statements: Statement[]) => JSON.stringify({ Version: '2012-10-17', Statement: statements })
const allow = (actions: string[], resource: string): Statement => ({
  Effect: 'Allow',
  Action: actions,
  Resource: [resource],
})
export const objectArn = (bucket: string, key: string) => `arn:aws:s3:::${bucket}/${key}`
function denyPut(condition: Record<string, unknown>): Statement {
  return { Effect: 'Deny', Action: 's3:PutObject', Resource: '*', Condition: condition }
}

/**
 * IAM treats `*` and `?` in a Resource as wildcards; `${*}`, `${?}` and `${$}` are the literal
 * characters (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_variables.html).
 * Default keys never contain them; a custom key that does gets the escape where the store reads
 * policy variables (AWS), and is refused elsewhere (checkTokenKey).
 */
const escapePolicyWildcards = (key: string) => key.replace(/[*?$]/g, (c) => `\${${c}}`)

/** Said at startup, by `doctor`, and to a token request, when GetFederationToken cannot work. */
export const FEDERATION_NEEDS_USER_KEY =
  "updraft: token mode's GetFederationToken needs an IAM user's long-term key, and the server's credentials are temporary " +
  "(a role's: Lambda, ECS, EKS, OIDC). Set sts: { mode: 'assume-role', roleArn } (S3_UPLOAD_STS_MODE=assume-role, S3_UPLOAD_ROLE_ARN) " +
  'with a role those credentials may assume, or give the server a static IAM user key'

export type IssueToken = (key: string) => Promise<StsCredentials>

/** What STS hands out, every field checked present (Expiration may be missing on some stores). */
export interface SessionCredentials {
  AccessKeyId: string
  SecretAccessKey: string
  SessionToken: string
  Expiration?: Date
}

/** Temporary credentials limited by `policy`, from GetFederationToken (AWS) or AssumeRole (AWS, RGW, MinIO). */
export type IssueCredentials = (
  policy: string,
  sessionName: string,
  durationSeconds: number,
) => Promise<SessionCredentials>

export function createCredentialIssuer(
  config: ResolvedConfig,
  credentials: ServerCredentials | undefined = config.credentials,
): IssueCredentials {
  const { sts } = config
  const client = new STSClient({
    region: config.region,
    // undefined: the SDK's default chain (server/credentials.ts).
    credentials,
    ...(sts.endpoint ? { endpoint: sts.endpoint } : {}),
    // An STS that accepts the connection and never answers must not hold the page's request forever.
    requestHandler: boundedRequests(config.timeouts.sts),
  })
  client.middlewareStack.add(namingTimeouts('STS', config.timeouts.sts), NAMING_TIMEOUTS)
  return async (Policy, name, DurationSeconds) => {
    if (Policy.length > MAX_SESSION_POLICY_LENGTH) {
      throw new RequestError(
        400,
        `The object key is too long for token credentials (their policy would be ${Policy.length} characters, ` +
          `over ${MAX_SESSION_POLICY_LENGTH}): use a shorter file name, or strategy 'presigned'`,
      )
    }
    if (sts.mode === 'federation' && isTemporary(await client.config.credentials()))
      throw new Error(FEDERATION_NEEDS_USER_KEY)
    const reply =
      sts.mode === 'assume-role'
        ? await client.send(
            new AssumeRoleCommand({ RoleArn: sts.roleArn, RoleSessionName: name, Policy, DurationSeconds }),
          )
        : await client.send(new GetFederationTokenCommand({ Name: name, Policy, DurationSeconds }))
    return complete(reply.Credentials)
  }
}

/** Temporary credentials for one upload: `uploadPolicy` on the one key, for an hour. */
export function createTokenIssuer(config: ResolvedConfig, issue = createCredentialIssuer(config)): IssueToken {
  return async (key) =>
    toWire(
      await issue(
        uploadPolicy(config.bucket, key, config.resumable, config.sts.policyVariables),
        ROLE_SESSION_NAME,
        TOKEN_DURATION_SECONDS,
      ),
    )
}

function complete(credentials: Credentials | undefined): SessionCredentials {
  const { AccessKeyId, SecretAccessKey, SessionToken, Expiration } = credentials ?? {}
  if (!AccessKeyId || !SecretAccessKey || !SessionToken) {
    throw new Error('updraft: STS answered without complete Credentials')
  }
  return { AccessKeyId, SecretAccessKey, SessionToken, Expiration }
}

/** Expiration a Date → the wire's JSON shape, which next-s3-upload's client reads. */
function toWire({ AccessKeyId, SecretAccessKey, SessionToken, Expiration }: SessionCredentials): StsCredentials {
  return { AccessKeyId, SecretAccessKey, SessionToken, Expiration: Expiration?.toISOString() }
}
