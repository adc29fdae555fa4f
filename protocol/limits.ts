/**
 * Every number both sides must agree on, in one place: S3's own limits, and the upload API's
 * limits on what one request may ask for.
 */

export const MiB = 1024 * 1024

// S3's multipart limits: https://docs.aws.amazon.com/AmazonS3/latest/userguide/qfacts.html
/** The smallest part S3 accepts (all but the last), 5 MiB: the least `partSize`, and its default. */
export const MIN_PART_SIZE = 5 * MiB
/** The largest part S3 accepts, 5 GiB: the most `partSize` may be. */
export const MAX_PART_SIZE = 5 * 1024 * MiB
/** Parts one multipart upload may have: `planParts` raises the part size to stay within them. */
export const MAX_PARTS = 10_000
/** The largest object S3 stores, 5 TiB: the largest body an upload takes. */
export const MAX_OBJECT_SIZE = 5 * 1024 * 1024 * MiB
/** S3's limit on key length: https://docs.aws.amazon.com/AmazonS3/latest/userguide/object-keys.html */
export const MAX_KEY_BYTES = 1024

/** One `/parts` call signs at most this many URLs: enough to stay ahead of any queue, bounded work per request. */
export const MAX_PARTS_PER_REQUEST = 100
/**
 * URLs for the first parts come in the presigned multipart reply itself, so the first PUTs wait
 * on no `/parts` round trip: two batches of the default 4 parts in flight.
 */
export const FIRST_PART_URLS = 8
/**
 * The upload API refuses bodies beyond this before parsing. A `/complete` of 10 000 parts is
 * ~550 KB; 1 MiB is also Fastify's default body limit.
 */
export const MAX_BODY_BYTES = 1024 * 1024
export const MAX_FILENAME_BYTES = 1024
/** `filetype` becomes a signed Content-Type header. */
export const MAX_FILETYPE_LENGTH = 255
/** `metadata` travels inside every ticket, so it stays small: this many bytes of JSON. */
export const MAX_METADATA_BYTES = 2048
/** A ranged GET of this many first bytes is enough for every file signature the server checks. */
export const SIGNATURE_BYTES = 16
/**
 * Files one batch request (`/batch`, `/batch/complete`) may name. Two API calls per batch (ask,
 * confirm) need batches of 20 or more for a page to make at most 0.1 API calls per file; 100 keeps
 * a batch `/complete` of tickets carrying the largest metadata (~3.5 KB each) within
 * MAX_BODY_BYTES, and the work one request sets the server going (presigns, STS calls, storage
 * requests, `onUploadComplete` calls) to what 100 one-file requests would.
 */
export const MAX_BATCH_FILES = 100
