// `updraft-s3/server`: the upload API as a Web-standard handler. Everything exported here is
// public API (api/updraft-s3-server.api.md); presigners, policies, config resolution and media-type
// parsing are the handler's internals (the CLI and tests import them from their modules).

export type { Timeouts } from './bounds.ts'
export type {
  CannedAcl,
  CompletedUpload,
  Logger,
  MetadataValidator,
  PresignWith,
  StsConfig,
  StsMode,
  UploadHandlerConfig,
} from './config.ts'
export type { ServerCredentials } from './credentials.ts'
export { createLazyUploadHandler, createUploadHandler, type UploadHandler } from './handler.ts'
export { defaultKey, sanitizeFilename, sanitizePath } from './key.ts'
export type { RedisClient } from './redis.ts'
export { createRedisThrottle, type RedisThrottleOptions } from './redis-throttle.ts'
export { RequestError } from './request-error.ts'
export type { Route } from './routes.ts'
export type { ObjectExtrasAllowance } from './stored-extras.ts'
export { createUploadSweeper, type SweeperOptions, type SweepOptions, type SweepReport } from './sweep.ts'
// The wire protocol's types, for clients written by hand (docs/server.md, "Routes").
