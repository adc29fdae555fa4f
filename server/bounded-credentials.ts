import { S3Client } from '@aws-sdk/client-s3'
import { NotAnsweredError } from './bounds.ts'
import type { ResolvedConfig } from './config.ts'
import type { ResolvedCredentials, ServerCredentials } from './credentials.ts'

// The server's own credentials, when they are not a static key, resolved within a bound. The SDK's
// HTTP credential provider (ECS, EKS, Lambda: AWS_CONTAINER_CREDENTIALS_*) only warns when its
// source accepts the connection and never answers, and the client memoizes that pending promise:
// every later request waited on it, even after the source answered again (issue 33). Here each
// resolution races a deadline; one that misses it is dropped, so the next request asks afresh
// (a new chain for the SDK's default one), and a credential still valid stands in meanwhile.

/** The SDK renews temporary credentials this long before they expire; so does this. */
const RENEW_BEFORE_MS = 5 * 60_000

type Provider = () => Promise<ResolvedCredentials>

/** `config.credentials` as the S3 client gets it: a static key as it is, anything else bounded by `timeouts.credentials`. */
export function boundedServerCredentials(
  config: Pick<ResolvedConfig, 'credentials' | 'region' | 'timeouts'>,
): ServerCredentials | undefined {
  const { credentials, timeouts } = config
  if (credentials !== undefined && typeof credentials !== 'function') return credentials
  const ms = timeouts.credentials
  if (credentials !== undefined)
    return bounded(() => (credentials as Provider)(), ms, 'The credentials provider given in the server config')
  // The SDK's default chain, built anew for each resolution: its memoized instance would keep a
  // resolution that never settles. Its providers' own per-request timeout kept inside the bound.
  const chain = defaultChain(config.region, Math.min(ms, 1_000))
  return bounded(() => chain()(), ms, describeChain())
}

/**
 * `resolve` within `ms`, its result kept until the renewal window, a late resolution dropped. In
 * the window, a credential still valid is answered at once while the renewal runs behind it (as
 * the SDK's own memoization does).
 */
function bounded(resolve: () => Promise<ResolvedCredentials>, ms: number, what: string): Provider {
  let current: ResolvedCredentials | undefined
  let resolving: Promise<ResolvedCredentials> | undefined

  function renew(): Promise<ResolvedCredentials> {
    if (resolving) return resolving
    const attempt = resolve()
    let timer: ReturnType<typeof setTimeout> | undefined
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new NotAnsweredError(what, ms)), ms)
    })
    resolving = Promise.race([attempt, late]).finally(() => {
      clearTimeout(timer)
      // Settled or late: the next call asks afresh. A late attempt is abandoned, never awaited again.
      resolving = undefined
    })
    return resolving.then((credentials) => (current = credentials))
  }

  return async () => {
    if (current && !expiresWithin(current, RENEW_BEFORE_MS)) return current
    if (current && !expiresWithin(current, 0)) {
      renew().catch(() => {}) // failed or late: the next request tries again
      return current
    }
    return renew()
  }
}

const expiresWithin = (credentials: ResolvedCredentials, ms: number) =>
  credentials.expiration !== undefined && credentials.expiration.getTime() - Date.now() < ms

/** The SDK's default chain as S3Client builds it, as a factory of fresh chains. */
function defaultChain(region: string, perRequestMs: number): () => Provider {
  const client = new S3Client({ region })
  const factory = client.config.credentialDefaultProvider
  client.destroy()
  if (!factory) throw new Error('updraft: the AWS SDK offers no default credential chain here; pass credentials')
  // timeout and maxRetries: the container and instance-metadata providers' own settings; the
  // region for the STS client of web identity and SSO, as the S3 client would hand it down.
  return () => factory({ region, parentClientConfig: { region }, timeout: perRequestMs, maxRetries: 1 }) as Provider
}

/** Which source the SDK's chain will ask, in words a deployer recognises (the environment decides). */
function describeChain(): string {
  const env = globalThis.process?.env ?? {}
  if (env.AWS_CONTAINER_CREDENTIALS_FULL_URI || env.AWS_CONTAINER_CREDENTIALS_RELATIVE_URI)
    return "The server's credentials source (the container credentials endpoint)"
  if (env.AWS_WEB_IDENTITY_TOKEN_FILE) return "The server's credentials source (STS, for the web identity token)"
  return "The server's credentials source (the AWS SDK's chain: profile, SSO or instance metadata)"
}
