// `updraft-s3/protocol`: what page and upload API say to each other, for people writing their own
// side of it (an upload API in another framework or language, a client of their own). Types only,
// plus the constants both sides plan with. Listed once: no other entry exports these names.

export { MAX_BATCH_FILES, MAX_OBJECT_SIZE, MAX_PART_SIZE, MAX_PARTS, MIN_PART_SIZE } from './limits.ts'
export { type PartPlan, planParts } from './parts.ts'
export type {
  AbortReply,
  AbortRequest,
  BatchCompleteReply,
  BatchCompleteRequest,
  BatchError,
  BatchUploadReply,
  BatchUploadRequest,
  CompleteReply,
  CompleteRequest,
  DuplicatesReply,
  DuplicatesRequest,
  ErrorCode,
  ErrorReply,
  InfoReply,
  JsonObject,
  JsonValue,
  ListPartsReply,
  ListPartsRequest,
  LocationReply,
  MetadataOf,
  PartsReply,
  PartsRequest,
  PresignedMultipartReply,
  PresignedPutReply,
  PresignedReply,
  RefreshReply,
  RefreshRequest,
  ServerDataOf,
  StoredPart,
  Strategy,
  StsCredentials,
  TokenReply,
  UploadRequest,
  UploadTypes,
} from './wire.ts'
export { DEFAULT_API_PATH } from './wire.ts'
