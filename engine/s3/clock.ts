/**
 * The page's clock can be off; storage refuses SigV4 requests more than 15 minutes off its own
 * (`RequestTimeTooSkewed`) and STS expiry times are in the server's clock. The offset is learned
 * from replies (their `Date` header, S3's `<ServerTime>`) and shared by every upload on the page.
 */
let skew = 0

/** Milliseconds since the epoch as the servers count them. */
export const serverNow = () => Date.now() + skew

/**
 * Takes `time` (an HTTP date or ISO time a server just sent) as the servers' clock. An offset
 * under a minute counts as none: the `Date` header's one-second resolution would only add noise,
 * and storage allows 15 minutes. False when `time` is not a time.
 */
export function learnServerTime(time: string | null | undefined): boolean {
  const offset = Date.parse(time!) - Date.now()
  if (Number.isNaN(offset)) return false
  skew = Math.abs(offset) > 60_000 ? offset : 0
  return true
}
