import { escapeXml } from '../../protocol/xml.ts'
import { createRun } from '../core/run.ts'
import { send } from '../s3/send.ts'
import { createSigner } from '../s3/sign.ts'
import type { ObjectExtras, ObjectTarget } from '../s3/target.ts'
import { md5, toBase64 } from './md5.ts'

/**
 * Object tags, an opt-in of `uploadObject`: the `x-amz-tagging` header on PutObject and
 * CreateMultipartUpload, so the object is tagged as it is written, in the same request.
 * Spread the result into the target: `uploadObject(file, { ...target, ...taggingHeaders(tags) })`.
 *
 * AWS checks `s3:PutObjectTagging` on such a request, which the upload API's token policy does not
 * grant: tags need caller-held credentials, or a token policy of your own that allows it.
 * Ceph RGW 16.2 ignores the header on CreateMultipartUpload: there, tag a multipart upload
 * afterwards with `putObjectTagging`.
 *
 * @param tags - Tag name → value, at most 10 (S3's limit).
 * @returns `{ objectHeaders }` to spread into an {@link ObjectTarget}; empty for no tags.
 * @throws `TypeError` when `tags` holds more than 10 tags.
 * @example
 * ```ts
 * import { uploadObject } from 'updraft-s3'
 * import { taggingHeaders } from 'updraft-s3/tags'
 *
 * await uploadObject(file, { ...target, ...taggingHeaders({ project: 'cats', owner: 'ana' }) })
 * ```
 */
export function taggingHeaders(tags: Record<string, string>): ObjectExtras {
  const entries = tagEntries(tags)
  if (!entries.length) return {}
  // URL query form. encodeURIComponent writes a space as %20, never `+`: Ceph RGW decodes tags
  // without turning `+` into a space.
  const query = entries.map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`).join('&')
  return { objectHeaders: { 'x-amz-tagging': query } }
}

/**
 * PutObjectTagging: replaces the tag set of the object `target` names (an object just written
 * with `uploadObject(file, target)`), as `@aws-sdk/lib-storage` tags its uploads. For stores that
 * drop `x-amz-tagging` on multipart uploads. Needs `s3:PutObjectTagging`. Retried as uploads are
 * (`retry`, `signal`, `transport` of `target`).
 *
 * @param target - The object, its credentials and transfer options, as given to `uploadObject`.
 * @param tags - Tag name → value, at most 10 (S3's limit).
 * @throws {@link S3Error} storage refused (`AccessDenied` without `s3:PutObjectTagging`, `NoSuchKey`).
 * @throws {@link NetworkError} no reply on every attempt.
 * @throws {@link UploadAbortedError} `target.signal` aborted.
 * @throws `TypeError` more than 10 tags, or an invalid bucket or key.
 * @example
 * ```ts
 * import { putObjectTagging } from 'updraft-s3/tags'
 *
 * await uploadObject(file, target)
 * await putObjectTagging(target, { project: 'cats' }) // RGW ignores tags sent with a multipart upload
 * ```
 */
export async function putObjectTagging(target: ObjectTarget, tags: Record<string, string>): Promise<void> {
  const body = `<Tagging xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><TagSet>${tagEntries(tags)
    .map(([name, value]) => `<Tag><Key>${escapeXml(name)}</Key><Value>${escapeXml(value)}</Value></Tag>`)
    .join('')}</TagSet></Tagging>`
  const run = createRun(target)
  const sign = createSigner(target.credentials, target)
  // S3 requires a body checksum on PutObjectTagging; Content-MD5 is the one every store knows.
  const headers = { 'content-type': 'application/xml', 'content-md5': toBase64(md5(new TextEncoder().encode(body))) }
  await send(run, (refused) => sign('PUT', '?tagging', headers, refused), { body, signal: run.options.signal })
}

/** S3 allows at most 10 tags on an object. */
const MAX_TAGS = 10

function tagEntries(tags: Record<string, string>) {
  const entries = Object.entries(tags)
  if (entries.length > MAX_TAGS) {
    throw new TypeError(`updraft: tags can hold at most ${MAX_TAGS} tags (S3's limit), got ${entries.length}`)
  }
  return entries
}
