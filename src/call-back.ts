/**
 * Calls the app's callback. One that throws is the app's bug: reported as uncaught on its own task
 * (as the engine does with its callbacks, and the platform with an event listener's), rather than
 * rejecting `uploadToS3` (or a recording's `start`) or turning a stored file's entry into a failed one that Retry would send
 * again. The engine's twin (engine/core/callback.ts) is not in its public entry, the one src/ imports.
 */
export function callBack<A extends unknown[]>(callback: ((...args: A) => void) | undefined, ...args: A): void {
  try {
    callback?.(...args)
  } catch (error) {
    setTimeout(() => {
      throw error
    })
  }
}
