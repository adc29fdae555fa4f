// `updraft-s3/fastify` under Node (package.json exports, the "node" condition): fastify.ts's exports,
// loaded once the AWS SDK and the Fastify plugins are known to be there (why a dynamic import: index.node.ts).
import { FASTIFY_PACKAGES, importNeeding } from './optional-peers.ts'

const fastify = await importNeeding('updraft-s3/fastify', FASTIFY_PACKAGES, () => import('./fastify.ts'))

// The values fastify.ts exports (its types come from fastify.d.ts); a unit test holds the two lists together.
export const { s3Upload, DEFAULT_RATE_LIMIT } = fastify
export default fastify.default
