import type { PresignedReply, TokenReply } from '../../protocol/wire.ts'

/** What `upload()` sends with: the endpoint's reply (or one rebuilt from a resume record). */
export interface Prepared {
  reply: TokenReply | PresignedReply
  contentType: string
}

/**
 * The part loop's view of resume (engine/resume/resume.ts makes it; without the `resume` option there is
 * none): parts storage already holds are not sent again, and every step is recorded so another
 * page can carry the upload on.
 */
export interface PartJournal {
  /** The multipart upload to carry on (token mode skips CreateMultipartUpload). */
  uploadId?: string
  /** Its part size, as recorded (token mode plans its own parts: the same plan as the record's). */
  partSize?: number
  /** Part number → ETag of the parts storage holds: not sent again. */
  stored: Map<number, string>
  /** The multipart upload exists on storage. */
  started(uploadId: string, partSize: number, partCount: number): void
  /** Storage accepted a part. */
  accepted(partNumber: number, etag: string): void
}
