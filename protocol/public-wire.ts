// The wire protocol's types as the package entries offer them (`updraft` for endpoints written by
// hand, `updraft/server` for clients written by hand): listed once here, so both entries say the
// same, and wire.ts's constants stay internal.
export type {
  Strategy,
  UploadResult,
  UploadRequest,
  StsCredentials,
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
  ErrorReply,
} from './wire.ts'
