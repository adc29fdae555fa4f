// `updraft-s3/protocol`: what page and upload API say to each other, for people writing their own
// side of it (an endpoint in another framework or language, a client of their own). Types only,
// plus the constants both sides plan with. Listed once: no other entry exports these names.
export type {
  Strategy,
  UploadRequest,
  StsCredentials,
  LocationReply,
  TokenReply,
  RefreshRequest,
  RefreshReply,
  DuplicatesRequest,
  DuplicatesReply,
  PresignedReply,
  PresignedPutReply,
  PresignedMultipartReply,
  PartsRequest,
  PartsReply,
  CompleteRequest,
  CompleteReply,
  AbortRequest,
  AbortReply,
  ListPartsRequest,
  ListPartsReply,
  StoredPart,
  InfoReply,
  ErrorCode,
  ErrorReply,
  UploadTypes,
  MetadataOf,
  ServerDataOf,
  JsonValue,
  JsonObject,
} from './wire.ts'
export { DEFAULT_ENDPOINT } from './wire.ts'
export { MIN_PART_SIZE, MAX_PARTS, MAX_PART_SIZE, MAX_OBJECT_SIZE } from './limits.ts'
export { planParts, type PartPlan } from './parts.ts'
