/**
 * `fn` over `items` with at most `limit` calls pending at once, results in the items' order. A
 * batch's files each make storage, STS or the app's `onUploadComplete` work: run one by one they
 * add up every round trip; all at once, one request of MAX_BATCH_FILES files would take every
 * socket the server's S3 client has. `fn` must not reject (a batch turns each file's failure into
 * its own result); if it does, the map rejects once the calls already started have settled.
 */
export async function mapWithin<T, R>(
  limit: number,
  items: readonly T[],
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length)
  let next = 0
  const worker = async () => {
    while (next < items.length) {
      const index = next++
      results[index] = await fn(items[index]!, index)
    }
  }
  const workers = Array.from({ length: Math.min(limit, items.length) }, worker)
  const settled = await Promise.allSettled(workers)
  const failed = settled.find((outcome) => outcome.status === 'rejected')
  if (failed) throw failed.reason
  return results
}
