import type { FastifyInstance } from 'fastify'

// The plugin's rate limit counts per `request.ip`. With Fastify's `trustProxy: true`, that is the
// leftmost X-Forwarded-For entry, which the client writes itself: behind a balancer that appends
// (haproxy's `option forwardfor`), each request with its own forged entry was counted as another
// client, and 35 requests from one address all passed a limit of 30 (issue 33). Trusting the
// balancer's address (`trustProxy: '10.0.0.2'`) takes the entry the balancer appended instead.
// (Fastify 5 reads a number of hops as trusting none: every visitor would share the balancer's count.)

/** Said once, at start, when the app trusts every hop. */
export const TRUSTS_EVERY_HOP =
  "updraft: Fastify's trustProxy is true, so request.ip is the leftmost X-Forwarded-For entry, which a client writes itself: " +
  "each request can claim another address and dodge the upload rate limit. Set trustProxy to your load balancer's address " +
  "or subnet (trustProxy: '10.0.0.2')"

/**
 * Whether the app was created with `trustProxy: true`. Fastify keeps its options on a symbol of
 * its own (`fastify.options`), inherited by every encapsulated instance, and exposes no public
 * reader for this one (`initialConfig` leaves it out); an app where it cannot be found is not
 * warned about.
 */
export function trustsEveryHop(app: FastifyInstance): boolean {
  for (let scope: object | null = app; scope; scope = Object.getPrototypeOf(scope)) {
    const symbol = Object.getOwnPropertySymbols(scope).find((candidate) => candidate.description === 'fastify.options')
    if (symbol) return (scope as Record<symbol, { trustProxy?: unknown } | undefined>)[symbol]?.trustProxy === true
  }
  return false
}
