import { fetchTransport, type Transport, xhrTransport } from './transport.ts'

/**
 * XHR where it exists (browsers: byte progress), fetch elsewhere (workers, other runtimes).
 * package.json "imports" picks a leaner build where the runtime is known: browser bundles get
 * `default-transport.browser.ts` (no fetch transport shipped), Node gets
 * `default-transport.node.ts` (node:http), workers (workerd) get this one.
 */
export const defaultTransport = (): Transport => (typeof XMLHttpRequest === 'function' ? xhrTransport : fetchTransport)
