import type { ResolvedConfig } from './config.ts'

/** s3rver's one key (its id and its secret): the store of `npx updraft-s3 store`, `npm start` and the tests (cli/embedded-s3.ts). */
export const LOCAL_STORE_KEY = 'S3RVER'

/**
 * Whether the config points at the local development store: s3rver on this machine, with its one
 * key. It has no STS and no IAM (any request its key signs is allowed), so the advice for a real
 * store — an STS mode for token uploads, a least-privilege policy for the server's key — is noise
 * there: startup and `doctor` say "expected for the local store" instead.
 */
export function isLocalStore({ endpoint, credentials }: Pick<ResolvedConfig, 'endpoint' | 'credentials'>): boolean {
  if (endpoint === undefined || typeof credentials !== 'object' || credentials === null) return false
  const { hostname } = new URL(endpoint)
  const loopback = hostname === 'localhost' || hostname === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(hostname)
  return loopback && (credentials as { accessKeyId?: string }).accessKeyId === LOCAL_STORE_KEY
}
