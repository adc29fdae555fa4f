/**
 * A module imported on first use and kept: a page's bundler makes it a chunk of its own, which
 * pages that never need it never load. Call the result early (beside the request whose reply
 * decides whether the code is needed) and the chunk costs no round trip of its own. A failed load
 * is tried again on the next call.
 */
export function lazily<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined
  return () =>
    (loading ??= load().catch((error: unknown) => {
      loading = undefined
      throw error
    }))
}
