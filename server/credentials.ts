import type { S3Client, S3ClientConfig } from '@aws-sdk/client-s3'
import { expiringPresigner, type Presign } from './presigner.ts'

// The server's own credentials: static keys, a provider the app passes, or (neither set) the AWS
// SDK's default chain — environment, shared config and SSO profiles, web identity (OIDC) tokens,
// ECS/EKS container credentials, EC2 instance metadata — which is how Lambda, ECS, EKS and
// Vercel's OIDC run. One provider per endpoint, its S3 client's: the SDK memoizes it and renews
// temporary credentials five minutes before they expire, and every other use reads it from there.

/** Static keys, or any AWS SDK credential provider (`fromContainerMetadata()`, `fromWebToken(…)`, `fromIni()`, …). */
export type ServerCredentials = NonNullable<S3ClientConfig['credentials']>

/** The credentials as the SDK resolved them: `sessionToken` and `expiration` when temporary. */
export type ResolvedCredentials = Awaited<ReturnType<S3Client['config']['credentials']>>

/** The server's credentials, resolved (and renewed) by its S3 client. */
export const credentialsOf = (s3: S3Client) => (): Promise<ResolvedCredentials> => s3.config.credentials()

/**
 * Presigned URLs signed with the server's own credentials, each cut to what they have left: a URL
 * signed with temporary credentials dies with them (storage answers ExpiredToken), so it says so
 * in X-Amz-Expires, and the engine asks for another. One presigner per credential (the SDK caches
 * the signing key it derives per day).
 */
export function serverKeySigner(
  region: string,
  credentials: () => Promise<ResolvedCredentials>,
): () => Promise<Presign> {
  const signers = new WeakMap<ResolvedCredentials, Presign>()
  return async () => {
    const current = await credentials()
    let signer = signers.get(current)
    if (!signer) {
      signer = expiringPresigner(
        current,
        region,
        current.expiration?.getTime(),
        'updraft: the server credentials have expired and were not renewed',
      )
      signers.set(current, signer)
    }
    return signer
  }
}

/** The SDK's record of where credentials came from (`$source`), in words a deployer recognises. */
const SOURCES: Array<[feature: string, words: string]> = [
  [
    'CREDENTIALS_CODE',
    'the server config (accessKeyId/secretAccessKey, S3_UPLOAD_KEY/S3_UPLOAD_SECRET, or credentials)',
  ],
  [
    'CREDENTIALS_ENV_VARS_STS_WEB_ID_TOKEN',
    'a web identity token named by AWS_WEB_IDENTITY_TOKEN_FILE (EKS, Vercel OIDC)',
  ],
  ['CREDENTIALS_ENV_VARS', 'the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY)'],
  [
    'CREDENTIALS_HTTP',
    'the container credentials endpoint (AWS_CONTAINER_CREDENTIALS_FULL_URI or _RELATIVE_URI: ECS, EKS Pod Identity, Lambda)',
  ],
  ['CREDENTIALS_STS_ASSUME_ROLE_WEB_ID', 'a web identity token (AssumeRoleWithWebIdentity)'],
  ['CREDENTIALS_PROFILE_SSO', 'an SSO profile of the shared config'],
  ['CREDENTIALS_SSO', 'an SSO profile of the shared config'],
  ['CREDENTIALS_PROFILE_PROCESS', 'a credential_process of the shared config'],
  ['CREDENTIALS_PROFILE', 'a profile of the shared config (~/.aws, AWS_PROFILE)'],
  ['CREDENTIALS_IMDS', 'the EC2 instance metadata service'],
  ['CREDENTIALS_STS_ASSUME_ROLE', 'an assumed role'],
]

/** Where these credentials came from, as far as the SDK says. */
export function credentialSource(credentials: ResolvedCredentials): string {
  const features = Object.keys((credentials as { $source?: Record<string, string> }).$source ?? {})
  return SOURCES.find(([feature]) => features.includes(feature))?.[1] ?? 'an AWS SDK credential provider'
}

/** Temporary credentials (a role's, a session's) carry a session token; an IAM user's keys do not. */
export const isTemporary = (credentials: ResolvedCredentials) => !!credentials.sessionToken
