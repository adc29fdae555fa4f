export { createUploadHandler, isAllowedType, type UploadHandler } from './handler.ts'
export {
  configFromEnv,
  resolveConfig,
  type UploadHandlerConfig,
  type ResolvedConfig,
  type StsConfig,
  type StsMode,
  type Logger,
} from './config.ts'
export { sanitizeFilename, defaultKey, MAX_KEY_BYTES, DEFAULT_KEY_PREFIX } from './key.ts'
export { uploadPolicy, FEDERATED_USER_NAME, TOKEN_DURATION_SECONDS } from './token.ts'
export { createQueryPresigner, type QueryPresigner, type QueryPresignRequest, type SigningCredentials } from './sigv4.ts'
export { PRESIGN_EXPIRES_IN } from './presign.ts'
export { RequestError, MAX_PARTS_PER_REQUEST } from './validate.ts'
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
  ErrorReply,
} from '../engine/protocol.ts'
