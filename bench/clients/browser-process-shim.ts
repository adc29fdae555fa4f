// lib-storage's browser build reaches Node's `process` through its stream polyfill.
export const process = (globalThis as { process?: unknown }).process ?? {
  env: {},
  browser: true,
  version: '',
  nextTick: (callback: (...args: unknown[]) => void, ...args: unknown[]) => queueMicrotask(() => callback(...args)),
}
