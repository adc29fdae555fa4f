import type { PresignedForm } from '../../protocol/wire.ts'
import type { Bytes } from '../core/body.ts'

/** An S3 POST form ready to send: the body, its Content-Type (with the boundary), and the bytes before the file's. */
export interface FormBody {
  body: Blob
  type: string
  /** Bytes of the fields before the file: progress counts the file's own bytes only. */
  head: number
}

/**
 * An S3 POST form as one `multipart/form-data` body: the policy's fields in their order, then the
 * file, last (S3 reads no field after it). A Blob rather than a FormData, so that every transport
 * sends it as it sends a PUT's body (node:http included), with byte progress. The boundary need not
 * be secret: a file that holds it would end early, and storage refuses a length the policy does not
 * name.
 */
export function formBody(form: PresignedForm, file: Bytes): FormBody {
  const boundary = `updraft${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}`
  const head = new TextEncoder().encode(
    // The file as a file part (a filename), as browsers' FormData sends one.
    [...Object.entries(form.fields), ['file"; filename="file', '']]
      .map(([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}`)
      .join('\r\n'),
  )
  return {
    body: new Blob([head, file as BlobPart, `\r\n--${boundary}--\r\n`]),
    type: `multipart/form-data; boundary=${boundary}`,
    head: head.byteLength,
  }
}
