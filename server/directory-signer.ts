import { CreateSessionCommand, type S3Client } from '@aws-sdk/client-s3'
import { type DirectorySession, SessionCache } from '../protocol/directory-session.ts'
import type { ResolvedConfig } from './config.ts'
import { expiringPresigner, type Presign } from './presigner.ts'
import { storageObjectUrl } from './storage.ts'

/**
 * Presigning for a directory bucket (S3 Express One Zone): URLs are signed with a CreateSession
 * session of the server's own credentials (service `s3express`, the token as
 * `X-Amz-S3session-Token`, through the SDK presigner's presignWithCredentials as getSignedUrl
 * does: server/presigner.ts), the session cached as the engine caches its own
 * (protocol/directory-session.ts: renewed a minute before it expires, purged every 30 s). Sessions
 * last about five minutes, so each URL is cut to what its session has left: at least a minute;
 * the engine asks again for a URL storage refuses as expired.
 * CreateSession goes through the server's S3 client, which signs it as AWS expects.
 * @throws EndpointRuleError when the bucket cannot be addressed as configured (`forcePathStyle` on AWS)
 */
export function createDirectorySigner(config: ResolvedConfig, s3: S3Client): () => Promise<Presign> {
  // At startup, not per request: a bucket the rules cannot address (path-style on AWS) throws EndpointRuleError.
  storageObjectUrl({ ...config, key: 'k' })
  const sessions = new SessionCache()
  const presigners = new WeakMap<DirectorySession, Presign>()
  // One server, one identity: the bucket is the whole cache key.
  const key = config.bucket

  async function createSession(): Promise<DirectorySession> {
    const { Credentials: c } = await s3.send(new CreateSessionCommand({ Bucket: config.bucket }))
    if (!c?.AccessKeyId || !c.SecretAccessKey || !c.SessionToken || !c.Expiration) {
      throw new Error(`updraft: CreateSession on ${config.bucket} answered without complete Credentials`)
    }
    return {
      accessKeyId: c.AccessKeyId,
      secretAccessKey: c.SecretAccessKey,
      sessionToken: c.SessionToken,
      expires: c.Expiration.getTime(),
    }
  }

  return async () => {
    const session = await sessions.get(key, createSession)
    let signer = presigners.get(session)
    if (!signer) {
      signer = expiringPresigner(
        session,
        config.region,
        session.expires,
        'updraft: the directory bucket session has expired',
        {
          directorySession: true,
        },
      )
      presigners.set(session, signer)
    }
    return signer
  }
}
