import { type Transport, xhrTransport } from './transport.ts'

/** The browser build of `#default-transport`: XMLHttpRequest, the only API with upload progress. */
export const defaultTransport = (): Transport => xhrTransport
