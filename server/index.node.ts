// `updraft-s3/server` under Node (package.json exports, the "node" condition): index.ts's exports,
// loaded once the AWS SDK is known to be there. A static import of index.ts would fail while Node
// links the module graph, before any code runs, with "Cannot find package '@aws-sdk/client-s3'";
// the dynamic import lets a missing SDK fail with the `npm install` line that adds it instead.
// Bundlers (Next.js, wrangler) resolve the same condition and report a missing package at build time.
import { importNeeding, SERVER_PACKAGES } from './optional-peers.ts'

const server = await importNeeding('updraft-s3/server', SERVER_PACKAGES, () => import('./index.ts'))

// The values index.ts exports (its types come from index.d.ts, package.json's "types"); a unit test holds the two lists together.
export const {
  createUploadHandler,
  createLazyUploadHandler,
  createUploadSweeper,
  createRedisThrottle,
  sanitizeFilename,
  sanitizePath,
  defaultKey,
  RequestError,
} = server
