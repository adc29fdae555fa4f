import { createElement, type ReactNode } from 'react'
import { vi } from 'vitest'
import { UploadAbortedError, type UploadOptions, type UploadResult } from '../../engine/index.ts'
import { type Uploader, UploaderContext } from '../../src/uploader.ts'

/** An `upload` stand-in for the React layer's unit tests, settled by hand; it rejects on abort as the engine does. */
export function stubUploader() {
  const calls: Array<{ file: File; options: UploadOptions; resolve(r: UploadResult): void; reject(e: unknown): void }> =
    []
  const uploader = vi.fn(
    (file: File, options: UploadOptions) =>
      new Promise<UploadResult>((resolve, reject) => {
        options.signal?.addEventListener('abort', () => reject(new UploadAbortedError()))
        calls.push({ file, options, resolve, reject })
      }),
  )
  return { uploader, calls, wrapper: withUploader(uploader) }
}

/**
 * A `wrapper` for `render`/`renderHook` under which the hooks and components upload through
 * `uploader` instead of the engine: the context is the hooks' one seam (src/uploader.ts), kept
 * out of every public type.
 */
export function withUploader(uploader: Uploader) {
  // biome-ignore lint/correctness/noComponentHookFactories: a render() wrapper, made once per test for its uploader, never during a render
  return function WithUploader({ children }: { children?: ReactNode }) {
    return createElement(UploaderContext.Provider, { value: uploader }, children)
  }
}
