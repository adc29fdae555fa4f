/**
 * Calls one of the caller's callbacks (`onProgress`, `onRetry`, `onCleanup`). A throw is a bug in
 * the caller's code, so it must not change the upload: not taken for a network failure and
 * retried (the transports call progress from inside their send loops), not a rejection nobody
 * handles. It is thrown again on its own task, where the platform reports it as uncaught, as it
 * does an event listener's.
 */
export function callBack<A extends unknown[]>(callback: ((...args: A) => unknown) | undefined, ...args: A): void {
  try {
    callback?.(...args)
  } catch (error) {
    setTimeout(() => {
      throw error
    })
  }
}

/**
 * Calls `listener` once `signal` aborts, at once if it already has; returns what stops listening.
 * Every abort the engine watches goes through here: one way to add, check and remove.
 */
export function onAbort(signal: AbortSignal | undefined, listener: () => void): () => void {
  signal?.addEventListener('abort', listener)
  if (signal?.aborted) listener()
  return () => signal?.removeEventListener('abort', listener)
}
