import { FEDERATED_USER_NAME, objectArn, UPLOAD_ACTIONS } from '../server/sts.ts'

export type TokenMode = 'presigned' | 'federation' | 'assume-role'

/**
 * The least IAM policy the server's key (S3_UPLOAD_KEY) needs, per mode, as README "Security"
 * tabulates it: PutObject (a single PUT, CreateMultipartUpload, UploadPart and
 * CompleteMultipartUpload all count as s3:PutObject) and AbortMultipartUpload under `keyPrefix`,
 * GetObject and DeleteObject there too, for `/complete` to check an upload (HEAD, a ranged GET)
 * and delete one that fails; ListBucketMultipartUploads on the bucket for the sweep of stale
 * uploads; plus the STS call of the token mode in use. In assume-role mode the role holds the
 * first S3 statement only: what it signs or issues must never read or delete.
 */
export function serverKeyPolicy(bucket: string, mode: TokenMode, keyPrefix: string): object {
  const statements: object[] = [
    { Effect: 'Allow', Action: UPLOAD_ACTIONS, Resource: objectArn(bucket, `${keyPrefix}*`) },
    { Effect: 'Allow', Action: ['s3:GetObject', 's3:DeleteObject'], Resource: objectArn(bucket, `${keyPrefix}*`) },
    { Effect: 'Allow', Action: 's3:ListBucketMultipartUploads', Resource: `arn:aws:s3:::${bucket}` },
  ]
  if (mode === 'federation') {
    statements.push({ Effect: 'Allow', Action: 'sts:GetFederationToken', Resource: `arn:aws:sts::ACCOUNT_ID:federated-user/${FEDERATED_USER_NAME}` })
  }
  if (mode === 'assume-role') statements.push({ Effect: 'Allow', Action: 'sts:AssumeRole', Resource: 'arn:aws:iam::ACCOUNT_ID:role/ROLE_NAME' })
  return { Version: '2012-10-17', Statement: statements }
}
