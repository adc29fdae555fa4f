import type { HeadObjectCommandOutput } from '@aws-sdk/client-s3'

/**
 * What an uploaded object may carry beyond what the upload API issued (`allowedObjectExtras`):
 * object tags and `x-amz-meta-*` names a token-mode page sets itself (`taggingHeaders`,
 * `objectHeaders`). Names are lower-case, without the `x-amz-meta-` prefix.
 */
export interface ObjectExtrasAllowance {
  /** Object tags (`x-amz-tagging`, seen as `x-amz-tagging-count`). @default false */
  tags?: boolean
  /** `x-amz-meta-{name}` headers, by name: `['project']` lets `x-amz-meta-project` through. @default none */
  meta?: readonly string[]
}

/**
 * The headers of the object the check reads, as the SDK parses them: a HEAD's reply and a GET's
 * carry the same (server/stored-object.ts reads whichever it sent).
 */
export type StoredHeaders = Pick<
  HeadObjectCommandOutput,
  | 'WebsiteRedirectLocation'
  | 'ContentEncoding'
  | 'ContentLanguage'
  | 'ExpiresString'
  | 'Expires'
  | 'ContentDisposition'
  | 'Metadata'
  | 'TagCount'
>

/** What the check needs of the config: the Content-Disposition it signs, and the allowance. */
export interface IssuedExtras {
  contentDisposition?: string
  allowedObjectExtras?: ObjectExtrasAllowance
}

/**
 * Response headers storage serves with the object that the upload API never sets: a page that adds
 * one to a presigned PUT (RGW and s3rver store unsigned headers; AWS refuses unsigned `x-amz-*`
 * but applies unsigned standard ones) or to a token-mode request changes how the object is served
 * — a redirect from the bucket's website endpoint, a body browsers inflate, a cache lifetime.
 */
const NEVER_ISSUED = [
  ['WebsiteRedirectLocation', 'x-amz-website-redirect-location'],
  ['ContentEncoding', 'Content-Encoding'],
  ['ContentLanguage', 'Content-Language'],
  ['ExpiresString', 'Expires'],
] as const

/**
 * What the stored object carries that this upload was not issued, as header names (never their
 * values, which are the page's words): empty when nothing. Checked on storage's reply (HEAD or ranged GET), so it sees
 * what every store kept, whichever request put it there (a single PUT, the page's own
 * CreateMultipartUpload in token mode). Left alone: what the upload API signs and storage already
 * holds to it (Content-Type, Cache-Control, the ACL), and what changes how the object is kept
 * rather than served (SSE, checksums, storage class).
 */
export function unissuedExtras(
  head: StoredHeaders,
  { contentDisposition, allowedObjectExtras = {} }: IssuedExtras,
): string[] {
  const found: string[] = []
  for (const [field, header] of NEVER_ISSUED) if (present(head[field])) found.push(header)
  // The SDK parses Expires to a Date and keeps the raw text beside it; one is enough.
  if (!present(head.ExpiresString) && head.Expires !== undefined) found.push('Expires')
  // Presigned uploads sign the configured one, so a second value is refused by storage; a token
  // page sets none (its reply names none). Anything else is the page's own.
  if (present(head.ContentDisposition) && head.ContentDisposition !== contentDisposition)
    found.push('Content-Disposition')
  const allowedMeta = new Set(allowedObjectExtras.meta ?? [])
  for (const name of Object.keys(head.Metadata ?? {})) {
    if (!allowedMeta.has(name.toLowerCase())) found.push(`x-amz-meta-${name.toLowerCase()}`)
  }
  if ((head.TagCount ?? 0) > 0 && !allowedObjectExtras.tags)
    found.push(`x-amz-tagging (${head.TagCount} ${head.TagCount === 1 ? 'tag' : 'tags'})`)
  return found
}

/** `allowedObjectExtras` as the check reads it, or a TypeError naming what is wrong. */
export function normalizeAllowance(allowance: ObjectExtrasAllowance | undefined): ObjectExtrasAllowance | undefined {
  if (allowance === undefined) return undefined
  if (typeof allowance !== 'object' || allowance === null) {
    throw new TypeError(
      `updraft: allowedObjectExtras must be an object such as { tags: true, meta: ['project'] }, got ${String(allowance)}`,
    )
  }
  const { tags, meta = [] } = allowance
  if (tags !== undefined && typeof tags !== 'boolean')
    throw new TypeError(`updraft: allowedObjectExtras.tags must be true or false, got ${JSON.stringify(tags)}`)
  if (!Array.isArray(meta))
    throw new TypeError(`updraft: allowedObjectExtras.meta must be an array of names, got ${JSON.stringify(meta)}`)
  const names = meta.map((name: unknown) => {
    // An HTTP token (RFC 9110), as header names are; the prefix is taken off when given.
    if (typeof name !== 'string' || !/^[!#$%&'*+.^_`|~0-9a-z-]+$/i.test(name.replace(/^x-amz-meta-/i, ''))) {
      throw new TypeError(
        `updraft: allowedObjectExtras.meta must hold x-amz-meta-* names such as 'project', got ${JSON.stringify(name)}`,
      )
    }
    return name.toLowerCase().replace(/^x-amz-meta-/, '')
  })
  return { tags: tags ?? false, meta: names }
}

const present = (value: unknown) => value !== undefined && value !== null && value !== ''
