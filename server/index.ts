export { createUploadHandler, type UploadHandler } from './handler.ts'
export {
  configFromEnv,
  resolveConfig,
  type UploadHandlerConfig,
  type ResolvedConfig,
  type StsConfig,
  type StsMode,
  type Logger,
} from './config.ts'
export { sanitizeFilename, defaultKey, DEFAULT_KEY_PREFIX } from './key.ts'
export { uploadPolicy, FEDERATED_USER_NAME, TOKEN_DURATION_SECONDS } from './sts.ts'
export { createQueryPresigner, type QueryPresigner, type QueryPresignRequest, type SigningCredentials } from './sigv4.ts'
export { PRESIGN_EXPIRES_IN } from './presigned-urls.ts'
export { RequestError, isAllowedType } from '../protocol/validate.ts'
export { MAX_KEY_BYTES, MAX_PARTS_PER_REQUEST } from '../protocol/limits.ts'
export type {
  UploadRequest,
  TokenReply,
  PresignedReply,
  PresignedPutReply,
  PresignedMultipartReply,
  PartsRequest,
  PartsReply,
  CompleteRequest,
  CompleteReply,
  AbortRequest,
  AbortReply,
  InfoReply,
  ErrorReply,
} from '../protocol/wire.ts'
