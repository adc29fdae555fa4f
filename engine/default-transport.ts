import { fetchTransport, type Transport, xhrTransport } from './transport.ts'

/**
 * XHR where it exists (browsers: byte progress), fetch elsewhere (Node, Deno, workers). Bundlers
 * building for browsers resolve `#default-transport` to `default-transport.browser.ts` instead
 * (package.json "imports"), so pages do not ship the fetch transport.
 */
export const defaultTransport = (): Transport =>
  typeof XMLHttpRequest === 'function' ? xhrTransport : fetchTransport
