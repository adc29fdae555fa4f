import { AssumeRoleCommand, GetFederationTokenCommand, STSClient, type Credentials } from '@aws-sdk/client-sts'
import type { StsCredentials } from '../protocol/wire.ts'
import type { ResolvedConfig } from './config.ts'

/** next-s3-upload's name for the federated user; shows up in CloudTrail. */
export const FEDERATED_USER_NAME = 'S3UploadWebToken'
/** Also the RoleSessionName in assume-role mode (RGW wants at least 2 characters). */
export const ROLE_SESSION_NAME = FEDERATED_USER_NAME
export const TOKEN_DURATION_SECONDS = 60 * 60

/**
 * The inline policy of one upload's credentials: PutObject (single and every multipart step but
 * abort) and AbortMultipartUpload (the engine's cleanup), on the one key, nothing else.
 * Compact on purpose: Ceph 16.2's radosgw crashes on session policies of ~1700 characters.
 */
export function uploadPolicy(bucket: string, key: string): string {
  return JSON.stringify({
    Version: '2012-10-17',
    Statement: [
      {
        Effect: 'Allow',
        Action: ['s3:PutObject', 's3:AbortMultipartUpload'],
        Resource: [`arn:aws:s3:::${bucket}/${escapePolicyWildcards(key)}`],
      },
    ],
  })
}

/**
 * IAM treats `*` and `?` in a Resource as wildcards; `${*}`, `${?}` and `${$}` are the literal
 * characters (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_variables.html).
 * Default keys never contain them; a custom key that does gets the escape, which fails closed on
 * stores without policy variables (RGW then denies the upload instead of allowing a pattern).
 */
const escapePolicyWildcards = (key: string) => key.replace(/[*?$]/g, (c) => `\${${c}}`)

export type IssueToken = (key: string) => Promise<StsCredentials>

/** Temporary credentials for one upload, from GetFederationToken (AWS) or AssumeRole (AWS, RGW, MinIO). */
export function createTokenIssuer(config: ResolvedConfig): IssueToken {
  const { sts } = config
  const client = new STSClient({
    region: config.region,
    credentials: { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey },
    ...(sts.endpoint ? { endpoint: sts.endpoint } : {}),
  })
  return async (key) => {
    const Policy = uploadPolicy(config.bucket, key)
    const reply =
      sts.mode === 'assume-role'
        ? await client.send(
            new AssumeRoleCommand({
              RoleArn: sts.roleArn,
              RoleSessionName: ROLE_SESSION_NAME,
              Policy,
              DurationSeconds: TOKEN_DURATION_SECONDS,
            }),
          )
        : await client.send(
            new GetFederationTokenCommand({ Name: FEDERATED_USER_NAME, Policy, DurationSeconds: TOKEN_DURATION_SECONDS }),
          )
    return toWire(reply.Credentials)
  }
}

/** The SDK's Credentials (Expiration a Date) → the wire's JSON shape, which next-s3-upload's client reads. */
function toWire(credentials: Credentials | undefined): StsCredentials {
  const { AccessKeyId, SecretAccessKey, SessionToken, Expiration } = credentials ?? {}
  if (!AccessKeyId || !SecretAccessKey || !SessionToken) {
    throw new Error('updraft: STS answered without complete Credentials')
  }
  return { AccessKeyId, SecretAccessKey, SessionToken, Expiration: Expiration?.toISOString() }
}
