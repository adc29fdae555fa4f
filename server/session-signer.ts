import type { S3Client } from '@aws-sdk/client-s3'
import { isDirectoryBucket } from '../protocol/directory-session.ts'
import type { ResolvedConfig } from './config.ts'
import { credentialsOf, serverKeySigner } from './credentials.ts'
import { createDirectorySigner } from './directory-signer.ts'
import { errorLogFields } from './error-log-fields.ts'
import { describeServerKeyPolicy, serverKeyPolicyFor } from './key-policy.ts'
import { describePreflight, refusesSessionPreflight, sendPreflight } from './preflight-check.ts'
import { objectHeaders } from './presigned-urls.ts'
import { expiringPresigner, type Presign } from './presigner.ts'
import { createS3Client, storageObjectUrl } from './storage.ts'
import { createCredentialIssuer, type IssueCredentials, presignPolicy } from './sts.ts'

/** Shows up in CloudTrail (AWS) and RGW's log as the signer of presigned URLs. */
export const PRESIGNER_SESSION_NAME = 'S3UploadPresigner'
/** RGW's and AWS's default maximum session for a role. */
export const PRESIGNER_SESSION_SECONDS = 60 * 60
/** A new session is asked for once the current one has less than this left, so every URL gets at least this long. */
export const PRESIGNER_REFRESH_BEFORE_SECONDS = 30 * 60
/** How long a credential must still be good for to stand in when its renewal fails. */
const FALLBACK_MIN_SECONDS = 5 * 60
/** The Origin of the preflight check when `allowedOrigins` names none: any origin shows whether the signature is checked. */
export const PREFLIGHT_CHECK_ORIGIN = 'https://updraft-preflight-check.invalid'

/**
 * What signs the URLs the upload API hands to pages (config.presignWith):
 * - 'session': a cached STS credential whose policy allows only the upload actions under
 *   `keyPrefix` (server/sts.ts `presignPolicy`), renewed when it has less than 30 minutes left.
 *   RGW and s3rver apply headers a presigned request carries without signing them (AWS refuses
 *   them), so a page adding `x-amz-copy-source` to a URL signed with the server's own key had a
 *   copy made with the server's rights; signed with this credential, it finds none.
 * - 'server-key': the server's own key, for stores without STS.
 * - 'session' by default on a store other than AWS (`presignFallback`): the session, unless
 *   storage refuses the browser's CORS preflight for its URLs, then the server key (below).
 * A directory bucket (`--x-s3`) takes neither: its URLs are signed with CreateSession sessions
 * (server/directory-signer.ts).
 * One STS call per half hour, shared by every request waiting on it.
 */
export function createSessionSigner(
  config: ResolvedConfig,
  issue: IssueCredentials = createCredentialIssuer(config),
  s3?: S3Client,
  checkPreflight: typeof sendPreflight = sendPreflight,
): () => Promise<Presign> {
  // A directory bucket is signed for with CreateSession sessions, whatever presignWith says.
  const client = s3 ?? createS3Client(config)
  if (isDirectoryBucket(config.bucket)) return createDirectorySigner(config, client)
  const serverKey = serverKeySigner(config.region, credentialsOf(client))
  if (config.presignWith === 'server-key') return serverKey
  const session = createStsSigner(config, issue)
  return config.presignFallback ? withPreflightFallback(config, session, serverKey, checkPreflight) : session
}

/**
 * The default on a store other than AWS: the session signs, unless storage refuses the browser's
 * preflight for a session-signed URL where it allows the server key's (Ceph RGW 16.2:
 * server/preflight-check.ts). Checked once, on the first request, with a URL signed as uploads
 * are (no object is written: a preflight is an OPTIONS request); storage out of reach leaves it
 * undecided, and the next request checks again. The choice is logged, once, with why.
 */
function withPreflightFallback(
  config: ResolvedConfig,
  session: () => Promise<Presign>,
  serverKey: () => Promise<Presign>,
  checkPreflight: typeof sendPreflight,
): () => Promise<Presign> {
  let choice: 'session' | 'server-key' | undefined
  let checking: Promise<void> | undefined

  async function check(signer: Presign) {
    const origin = config.allowedOrigins?.[0] ?? PREFLIGHT_CHECK_ORIGIN
    const headers = objectHeaders(config, 'application/octet-stream')
    const request = {
      method: 'PUT',
      url: storageObjectUrl({ ...config, key: `${config.keyPrefix}updraft-preflight-check` }),
      headers: { ...headers, 'Content-Length': '1' },
      expiresIn: 60,
    }
    const names = Object.keys(headers)
    try {
      const byServerKey = await serverKey()
      const [bySession, byKey] = await Promise.all([
        signer(request).then((url) => checkPreflight(url, origin, names)),
        byServerKey(request).then((url) => checkPreflight(url, origin, names)),
      ])
      choice = refusesSessionPreflight(bySession, byKey) ? 'server-key' : 'session'
      if (choice === 'server-key') warnPreflightFallback(config, describePreflight(bySession))
    } catch (error) {
      config.logger.warn?.(
        { err: errorLogFields(error) },
        'updraft: could not check how storage answers a preflight for presigned URLs; signing with the session, checking again on the next request',
      )
    }
  }

  // Read through a function: `choice` changes while a request awaits the check.
  const chosen = () => choice
  return async () => {
    if (chosen() === 'server-key') return serverKey()
    const signer = await session()
    if (chosen() === undefined) {
      checking ??= check(signer).finally(() => {
        checking = undefined
      })
      await checking
    }
    return chosen() === 'server-key' ? serverKey() : signer
  }
}

/** One line, once: why the server key signs although the config has an STS, and what that key must then be. */
function warnPreflightFallback(config: ResolvedConfig, answer: string) {
  config.logger.warn?.(
    { store: config.endpoint, bucket: config.bucket },
    `updraft: presigned URLs are signed with the server's own key: storage answered the browser's CORS preflight for a URL ` +
      `signed by the STS session with ${answer} (as Ceph RGW 16.2 does), so no page could upload with it. Give that key only ` +
      `${describeServerKeyPolicy(serverKeyPolicyFor(config))} (npx updraft-s3 doctor prints this IAM policy); ` +
      `presignWith: 'session' keeps the session signer, for uploads from Node only`,
  )
}

/** The cached STS session credential, renewed when it has less than 30 minutes left. */
function createStsSigner(config: ResolvedConfig, issue: IssueCredentials): () => Promise<Presign> {
  const policy = presignPolicy(config.bucket, config.keyPrefix)
  let current: { signer: Presign; expires: number } | undefined
  let renewing: Promise<{ signer: Presign; expires: number }> | undefined

  async function renew() {
    const credentials = await issue(policy, PRESIGNER_SESSION_NAME, PRESIGNER_SESSION_SECONDS)
    const expires = credentials.Expiration?.getTime() ?? Date.now() + PRESIGNER_SESSION_SECONDS * 1000
    const session = {
      accessKeyId: credentials.AccessKeyId,
      secretAccessKey: credentials.SecretAccessKey,
      sessionToken: credentials.SessionToken,
    }
    const signer = expiringPresigner(
      session,
      config.region,
      expires,
      'updraft: the presigning session credential has expired',
    )
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
        config.logger.error(
          { err: errorLogFields(error) },
          'updraft: renewing the presigning session failed; using the current one',
        )
        return current.signer
      }
      throw error
    }
    return current.signer
  }
}
