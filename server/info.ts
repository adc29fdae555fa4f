import type { InfoReply } from '../protocol/wire.ts'
import type { ResolvedConfig } from './config.ts'

/** What the config implies, with `config.info` (the app's own knowledge, e.g. an embedded store) over it. */
export function serverInfo(config: ResolvedConfig): InfoReply {
  const reason = tokenUnavailableReason(config)
  return {
    token: reason === undefined,
    ...(reason === undefined ? {} : { tokenUnavailableReason: reason }),
    presigned: true,
    store: config.info?.store ?? describeStore(config),
  }
}

/** Why this server will not hand out token credentials, or undefined when it will. */
export function tokenUnavailableReason(config: ResolvedConfig): string | undefined {
  const noSts = stsUnavailableReason(config)
  if (noSts !== undefined) return noSts
  // A policy can name keys, not Content-Types: credentials would let the page store any type.
  if (config.allowedTypes) {
    return 'allowedTypes is set, and token credentials cannot restrict the Content-Type a page stores; presigned uploads sign it'
  }
  return undefined
}

/**
 * AssumeRole works wherever an STS answers it (AWS, RGW, MinIO: resolveConfig already insisted on
 * a roleArn). GetFederationToken exists only on AWS STS, so federation needs AWS itself or an STS
 * endpoint named on purpose; a custom store alone (R2, MinIO, RGW) cannot answer it. `info` (the
 * app's own knowledge, e.g. an embedded store) has the last word.
 */
export function stsUnavailableReason({ sts, endpoint, info }: Pick<ResolvedConfig, 'sts' | 'endpoint' | 'info'>): string | undefined {
  if (info?.tokenUnavailableReason !== undefined) return info.tokenUnavailableReason
  if (sts.mode === 'assume-role' || sts.endpoint !== undefined) return undefined
  if (endpoint === undefined || isAws(endpoint)) return undefined
  return (
    'GetFederationToken exists only on AWS STS; for this store set S3_UPLOAD_STS_MODE=assume-role ' +
    'and S3_UPLOAD_ROLE_ARN (RGW, MinIO), or S3_UPLOAD_STS_ENDPOINT'
  )
}

/** A name a person recognises; the endpoint's origin for stores that cannot be told apart. */
export function describeStore({ endpoint, region, bucket }: ResolvedConfig): string {
  const where = `bucket ${bucket}`
  if (endpoint === undefined || isAws(endpoint)) return `AWS S3 (${region}) · ${where}`
  const { host, origin } = new URL(endpoint)
  if (host.endsWith('.r2.cloudflarestorage.com')) return `Cloudflare R2 · ${where}`
  if (host.endsWith('.backblazeb2.com')) return `Backblaze B2 (${region}) · ${where}`
  return `S3-compatible store at ${origin} · ${where}`
}

export const isAws = (endpoint: string) => /(^|\.)amazonaws\.com(\.cn)?$/.test(new URL(endpoint).hostname)
