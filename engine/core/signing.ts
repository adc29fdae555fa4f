// What a signed storage request is, and what signs one: types only, so the run (which holds its
// signer) names them below the S3 layer that implements them (engine/s3/sign.ts).
import type { S3Error } from './errors.ts'

/** A storage request ready to send: signed headers (token mode) or a presigned URL. */
export interface SignedRequest {
  method: string
  url: string
  headers?: Record<string, string>
}

/**
 * Signs the requests on one object with credentials this side holds (SigV4, engine/s3/sign.ts
 * makes it): `query` names the request (`?uploads`, `?partNumber=2&uploadId=…`). With `refused`
 * (storage's refusal of the last attempt) it signs again where that can help (fresh credentials,
 * the servers' clock, the bucket's region), and throws `refused` where it cannot.
 */
export type Sign = ((
  method: string,
  query?: string,
  headers?: Record<string, string>,
  refused?: S3Error,
) => Promise<SignedRequest>) & {
  /** The object's URL as now signed for: it moves when storage names the bucket's region. */
  url(): string
}
