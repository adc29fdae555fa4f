import { DeleteObjectCommand, HeadObjectCommand, type S3Client } from '@aws-sdk/client-s3'
import { PRESIGNED_CACHE_CONTROL, type PresignedForm } from '../protocol/wire.ts'
import type { ResolvedConfig } from './config.ts'
import { errorLogFields } from './error-log-fields.ts'
import type { createFormPresigner } from './presigned-form.ts'

/** A form's lie that storage must refuse, for its policy to be worth handing out. */
interface Lie {
  /** What the page did, in the warning's words. */
  what: string
  /** The form as the page would change it. */
  fields?: (fields: Record<string, string>) => Record<string, string>
  /** The body, against a policy of exactly one byte. */
  body?: Uint8Array<ArrayBuffer>
}

const CHECK_TYPE = 'application/octet-stream'

/** Forms a store that enforces POST policies refuses, each a way a page could change what it writes. */
export const FORM_LIES: readonly Lie[] = [
  { what: 'a body one byte longer than the policy allows', body: new Uint8Array(2) },
  { what: 'a field the policy does not name', fields: (fields) => ({ ...fields, 'x-amz-meta-updraft-check': '1' }) },
  { what: 'another Content-Type', fields: (fields) => ({ ...fields, 'Content-Type': 'text/html' }) },
]

/** Sends `form` with `body` as the file, the way S3 wants it: every field, then the file, last; `timeout` ms at most. */
export function postForm(
  form: PresignedForm,
  body: Uint8Array<ArrayBuffer>,
  fields = form.fields,
  timeout = 30_000,
): Promise<Response> {
  const data = new FormData()
  for (const [name, value] of Object.entries(fields)) data.append(name, value)
  data.append('file', new Blob([body]))
  return fetch(form.url, { method: 'POST', body: data, redirect: 'manual', signal: AbortSignal.timeout(timeout) })
}

/**
 * Whether storage enforces the POST policies the upload API would hand out (`formUploads`): asked
 * once, before the first form, with four forms on keys of their own under `keyPrefix`: an honest
 * one (one byte) must be stored with the Content-Type (and the configured Content-Disposition) it
 * names, and each of {@link FORM_LIES} refused. s3rver stores all of them (it checks no policy);
 * Swift's S3 API answers 412 to any POST Object; AWS S3 and Ceph RGW refuse the lies, and RGW
 * keeps neither Cache-Control nor Content-Disposition from a form. Whatever a form stored is
 * deleted. A store that fails is logged once, and pages get PUT URLs; storage out of reach (a 5xx,
 * no reply within `timeouts.storage`) decides nothing: that request gets a PUT URL, and the next
 * asks again (concurrent ones share one check).
 */
export function createFormCheck(
  config: ResolvedConfig,
  presignForm: ReturnType<typeof createFormPresigner>,
  s3: S3Client,
): () => Promise<boolean> {
  let enforced: boolean | undefined
  let checking: Promise<boolean> | undefined

  /** Sends one form (honest, or `lie`): whether it was stored, and the stored object's headers. */
  async function attempt(lie?: Lie) {
    const key = `${config.keyPrefix}updraft-form-check/${crypto.randomUUID()}`
    const form = await presignForm({ key, contentType: CHECK_TYPE, filesize: 1 })
    if (!form) return { stored: false }
    // Storage that never answers must not hold the page's upload request: as long as a storage call's attempt.
    const response = await postForm(
      form,
      lie?.body ?? new Uint8Array(1),
      lie?.fields?.(form.fields),
      config.timeouts.storage,
    )
    await response.body?.cancel()
    if (response.status >= 500) throw new Error(`storage answered ${response.status} to a POST form`)
    if (response.status >= 300) return { stored: false }
    try {
      return { stored: true, head: await s3.send(new HeadObjectCommand({ Bucket: config.bucket, Key: key })) }
    } finally {
      await s3.send(new DeleteObjectCommand({ Bucket: config.bucket, Key: key }))
    }
  }

  async function check(): Promise<boolean> {
    const [honest, ...lies] = await Promise.all([attempt(), ...FORM_LIES.map((lie) => attempt(lie))])
    const taken = FORM_LIES.filter((_, index) => lies[index]!.stored).map((lie) => lie.what)
    const store = { store: config.endpoint ?? 'AWS S3', bucket: config.bucket }
    // What the policy binds that storage did not keep: Content-Disposition (`attachment`) is what
    // keeps a browser from rendering an upload, so a store that drops it gets PUT URLs.
    const dropped = honest.head && [
      ...(honest.head.ContentType !== CHECK_TYPE ? ['Content-Type'] : []),
      ...(config.contentDisposition && honest.head.ContentDisposition !== config.contentDisposition
        ? ['Content-Disposition']
        : []),
    ]
    const refusal = !honest.stored
      ? 'storage did not store an honest POST form (no POST Object)'
      : taken.length > 0
        ? `storage does not enforce POST policies (it stored a form with ${taken.join(', ')})`
        : dropped!.length > 0
          ? `storage does not keep the ${dropped!.join(' and ')} a POST form sets`
          : undefined
    if (refusal) {
      config.logger.warn?.(store, `updraft: formUploads is on, but ${refusal}: pages get presigned PUT URLs`)
      return false
    }
    // A caching hint, not a safeguard: forms still go, and the deployer hears it once (Ceph RGW).
    if (honest.head!.CacheControl !== PRESIGNED_CACHE_CONTROL)
      config.logger.warn?.(
        store,
        `updraft: storage keeps no Cache-Control from a POST form (as Ceph RGW does): objects uploaded by form are served without '${PRESIGNED_CACHE_CONTROL}'`,
      )
    return true
  }

  return async () => {
    if (enforced !== undefined) return enforced
    checking ??= check().finally(() => {
      checking = undefined
    })
    try {
      enforced = await checking
    } catch (error) {
      config.logger.warn?.(
        { err: errorLogFields(error) },
        'updraft: could not check whether storage enforces POST policies; this page gets a PUT URL, and the next request checks again',
      )
      return false
    }
    return enforced
  }
}
