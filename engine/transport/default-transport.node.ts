import { nodeTransport } from './node-transport.ts'
import type { Transport } from './transport.ts'

/**
 * The Node build of `#default-transport` (the "node" condition: Node, and Bun and Deno, which
 * speak node:http): node:http streams Blob bodies where Node's fetch copies them, at 1.3-1.4x
 * the throughput and less than half the memory (bench/RESULTS.md).
 */
export const defaultTransport = (): Transport => nodeTransport
