import type { S3Client } from '@aws-sdk/client-s3'
import { isDirectoryBucket } from '../protocol/directory-session.ts'
import type { ResolvedConfig } from './config.ts'
import { createDirectorySigner } from './directory-signer.ts'
import { describeError } from './errors.ts'
import { createS3Client } from './storage.ts'
import { createQueryPresigner, MAX_EXPIRES_IN, type Presign } from './sigv4.ts'
import { createCredentialIssuer, presignPolicy, type IssueCredentials } from './sts.ts'

/** Shows up in CloudTrail (AWS) and RGW's log as the signer of presigned URLs. */
export const PRESIGNER_SESSION_NAME = 'S3UploadPresigner'
/** RGW's and AWS's default maximum session for a role. */
export const PRESIGNER_SESSION_SECONDS = 60 * 60
/** A new session is asked for once the current one has less than this left, so every URL gets at least this long. */
export const PRESIGNER_REFRESH_BEFORE_SECONDS = 30 * 60
/** How long a credential must still be good for to stand in when its renewal fails. */
const FALLBACK_MIN_SECONDS = 5 * 60

/**
 * What signs the URLs the endpoint hands to pages (config.presignWith):
 * - 'session': a cached STS credential whose policy allows only the upload actions under
 *   `keyPrefix` (server/sts.ts `presignPolicy`), renewed when it has less than 30 minutes left.
 *   RGW and s3rver apply headers a presigned request carries without signing them (AWS refuses
 *   them), so a page adding `x-amz-copy-source` to a URL signed with the server's own key had a
 *   copy made with the server's rights; signed with this credential, it finds none.
 * - 'server-key': the server's own key, for stores without STS.
 * A directory bucket (`--x-s3`) takes neither: its URLs are signed with CreateSession sessions
 * (server/directory-signer.ts).
 * One STS call per half hour, shared by every request waiting on it.
 */
export function createSessionSigner(
  config: ResolvedConfig,
  issue: IssueCredentials = createCredentialIssuer(config),
  s3?: S3Client,
): () => Promise<Presign> {
  // A directory bucket is signed for with CreateSession sessions, whatever presignWith says.
  if (isDirectoryBucket(config.bucket)) return createDirectorySigner(config, s3 ?? createS3Client(config))
  if (config.presignWith === 'server-key') {
    const presign = createQueryPresigner(config, config.region)
    const signer: Presign = (request) => presign({ ...request, expiresIn: Math.min(request.expiresIn, MAX_EXPIRES_IN) })
    return async () => signer
  }

  const policy = presignPolicy(config.bucket, config.keyPrefix)
  let current: { signer: Presign; expires: number } | undefined
  let renewing: Promise<{ signer: Presign; expires: number }> | undefined

  async function renew() {
    const credentials = await issue(policy, PRESIGNER_SESSION_NAME, PRESIGNER_SESSION_SECONDS)
    const expires = credentials.Expiration?.getTime() ?? Date.now() + PRESIGNER_SESSION_SECONDS * 1000
    const presign = createQueryPresigner(
      { accessKeyId: credentials.AccessKeyId, secretAccessKey: credentials.SecretAccessKey, sessionToken: credentials.SessionToken },
      config.region,
    )
    const signer: Presign = (request) => {
      const date = request.date ?? new Date()
      // A URL outliving its credentials would be refused by storage as expired: say so in the URL.
      const left = Math.floor((expires - date.getTime()) / 1000)
      if (left < 1) throw new Error('updraft: the presigning session credential has expired')
      return presign({ ...request, date, expiresIn: Math.min(request.expiresIn, left) })
    }
    return { signer, expires }
  }

  return async () => {
    if (current && current.expires - Date.now() > PRESIGNER_REFRESH_BEFORE_SECONDS * 1000) return current.signer
    renewing ??= renew().finally(() => {
      renewing = undefined
    })
    try {
      current = await renewing
    } catch (error) {
      // STS hiccup with a credential still good for a while: keep signing, retry on the next call.
      if (current && current.expires - Date.now() > FALLBACK_MIN_SECONDS * 1000) {
        config.logger.error({ err: describeError(error) }, 'updraft: renewing the presigning session failed; using the current one')
        return current.signer
      }
      throw error
    }
    return current.signer
  }
}
