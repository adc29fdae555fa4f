export { createUploadHandler, type UploadHandler, type Route } from './handler.ts'
export { createUploadSweeper, type SweepOptions, type SweepReport } from './sweep.ts'
export {
  configFromEnv,
  resolveConfig,
  type UploadHandlerConfig,
  type ResolvedConfig,
  type StsConfig,
  type StsMode,
  type Logger,
  type PresignWith,
  type CannedAcl,
  type CompletedUpload,
  type MetadataValidator,
} from './config.ts'
export { sanitizeFilename, sanitizePath, defaultKey, DEFAULT_KEY_PREFIX } from './key.ts'
export { uploadPolicy, presignPolicy, FEDERATED_USER_NAME, TOKEN_DURATION_SECONDS, MAX_SESSION_POLICY_LENGTH } from './sts.ts'
export { createQueryPresigner, type QueryPresigner, type QueryPresignRequest, type SigningCredentials } from './sigv4.ts'
export { PRESIGN_EXPIRES_IN } from './presigned-urls.ts'
export { RequestError, isAllowedType } from '../protocol/validate.ts'
export { parseMediaType, isActiveContent, MediaTypeError, type MediaType } from '../protocol/content-type.ts'
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
  UploadTypes,
  UploadResult,
  JsonValue,
  JsonObject,
} from '../protocol/wire.ts'
