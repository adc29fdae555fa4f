import { DEFAULT_KEY_PREFIX } from '../server/key.ts'
import { FEDERATED_USER_NAME } from '../server/sts.ts'

export type TokenMode = 'presigned' | 'federation' | 'assume-role'

/**
 * The least IAM policy the server's key (S3_UPLOAD_KEY) needs, per mode. Presigned: it signs
 * PutObject (single PUT, CreateMultipartUpload, UploadPart, CompleteMultipartUpload all count as
 * s3:PutObject) and AbortMultipartUpload. Federation: GetFederationToken hands out at most the
 * caller's own rights, so the key keeps those two and may call sts:GetFederationToken. AssumeRole:
 * the role holds the S3 rights; the key only assumes it (presigned mode still uses the key's own).
 * Keys under `prefix` only: the default `key` callback writes `next-s3-uploads/…`.
 */
export function serverKeyPolicy(bucket: string, mode: TokenMode, prefix = `${DEFAULT_KEY_PREFIX}/`): object {
  const objects = { Effect: 'Allow', Action: ['s3:PutObject', 's3:AbortMultipartUpload'], Resource: `arn:aws:s3:::${bucket}/${prefix}*` }
  const statements: object[] = [objects]
  if (mode === 'federation') {
    statements.push({ Effect: 'Allow', Action: 'sts:GetFederationToken', Resource: `arn:aws:sts::ACCOUNT_ID:federated-user/${FEDERATED_USER_NAME}` })
  }
  if (mode === 'assume-role') statements.push({ Effect: 'Allow', Action: 'sts:AssumeRole', Resource: 'arn:aws:iam::ACCOUNT_ID:role/ROLE_NAME' })
  return { Version: '2012-10-17', Statement: statements }
}
