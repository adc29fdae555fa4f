// A presigned PUT URL is a write permission; on stores that apply headers a URL does not sign,
// a page can turn it into a server-side copy made with the signer's rights by adding
// `x-amz-copy-source` (docs/security.md, "No copy through a presigned URL"). Measured on Ceph RGW
// 16.2.15 with the server's key signing (tests/presigned-copy.test.ts):
// - PUT + `x-amz-copy-source` is CopyObject: it ignores `x-amz-copy-source-if-match` (RGW reads
//   only its own `x-amz-copy-if-match`);
// - PUT + `x-amz-copy-source` + `x-amz-copy-source-range` is a ranged copy through PutObject, which
//   honours no copy precondition at all, and succeeds only when the signed Content-Length is 0
//   (RGW adds the copied bytes to the declared length and then finds a mismatch): a 0-byte URL
//   copies any range of any object the signer may read;
// - UploadPart + `x-amz-copy-source` (with or without a range) fails the same length check for
//   every part URL, as each binds at least one byte: no part is stored.
// A range that cannot be satisfied, signed into the URL, closes both PUT paths: a copy with it
// answers 416 InvalidRange, whatever else the page adds (a second value makes the header another
// one than the signature covers: 403), while a plain PUT ignores it.

/**
 * Signed into every single-PUT URL where `copyGuard` is on (by default on every store but AWS,
 * which refuses a presigned request carrying an `x-amz-*` header it does not sign); the engine
 * sends it as it sends every header the reply lists. Whoever signs (the server's key, or a session
 * that may read nothing): what the reply lists is decided before the signer is.
 */
export const NO_COPY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'x-amz-copy-source-range': 'bytes=1-0',
})
