import { DeleteObjectCommand, type S3Client } from '@aws-sdk/client-s3'
import type { PresignedForm } from '../protocol/wire.ts'
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

/** Sends `form` with `body` as the file, the way S3 wants it: every field, then the file, last. */
export function postForm(form: PresignedForm, body: Uint8Array<ArrayBuffer>, fields = form.fields): Promise<Response> {
  const data = new FormData()
  for (const [name, value] of Object.entries(fields)) data.append(name, value)
  data.append('file', new Blob([body]))
  return fetch(form.url, { method: 'POST', body: data, redirect: 'manual' })
}

/**
 * Whether storage enforces the POST policies the upload API would hand out (`formUploads`): asked
 * once, before the first form, with four forms on keys of their own under `keyPrefix`: an honest
 * one (one byte) must be stored, and each of {@link FORM_LIES} refused. s3rver stores all of them
 * (it checks no policy); Swift's S3 API answers 412 to any POST Object; AWS S3 and Ceph RGW
 * refuse the lies. Whatever a form stored is deleted. A store that fails is logged once, and
 * pages get PUT URLs; storage out of reach (a 5xx, no reply) decides nothing, and the next
 * request asks again (concurrent ones share one check).
 */
export function createFormCheck(
  config: ResolvedConfig,
  presignForm: ReturnType<typeof createFormPresigner>,
  s3: S3Client,
): () => Promise<boolean> {
  let enforced: boolean | undefined
  let checking: Promise<boolean> | undefined

  async function attempt(lie?: Lie): Promise<boolean> {
    const key = `${config.keyPrefix}updraft-form-check/${crypto.randomUUID()}`
    const form = await presignForm({ key, contentType: CHECK_TYPE, filesize: 1 })
    if (!form) return false
    const response = await postForm(form, lie?.body ?? new Uint8Array(1), lie?.fields?.(form.fields))
    await response.body?.cancel()
    if (response.status >= 500) throw new Error(`storage answered ${response.status} to a POST form`)
    const stored = response.status < 300
    if (stored) await s3.send(new DeleteObjectCommand({ Bucket: config.bucket, Key: key }))
    return lie ? !stored : stored
  }

  async function check(): Promise<boolean> {
    const [honest, ...lies] = await Promise.all([attempt(), ...FORM_LIES.map((lie) => attempt(lie))])
    const taken = FORM_LIES.filter((_, index) => !lies[index]).map((lie) => lie.what)
    if (honest && taken.length === 0) return true
    config.logger.warn?.(
      { store: config.endpoint ?? 'AWS S3', bucket: config.bucket },
      honest
        ? `updraft: formUploads is on, but storage does not enforce POST policies (it stored a form with ${taken.join(', ')}): pages get presigned PUT URLs`
        : 'updraft: formUploads is on, but storage did not store an honest POST form (no POST Object): pages get presigned PUT URLs',
    )
    return false
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
