// `updraft-s3`: the browser upload engine. Everything exported here is public API (api/updraft-s3.api.md);
// helpers the engine shares between its own modules are imported from those modules directly.
export { uploadObject, type ObjectTarget, type ObjectExtras, type ChecksumRun, type ChecksumTarget } from './upload-object.ts'
export { sseCustomerKey } from './opt-ins/sse-c.ts'
export { taggingHeaders, putObjectTagging } from './opt-ins/tags.ts'
export { checksum, compositeChecksum, type ChecksumAlgorithm } from './opt-ins/checksums/index.ts'
export { planParts, type PartPlan } from '../protocol/parts.ts'
export { MIN_PART_SIZE, MAX_PARTS, MAX_PART_SIZE, MAX_OBJECT_SIZE } from '../protocol/limits.ts'
export type { ObjectLocation } from '../protocol/object-url.ts'
export { createQueue, type Queue } from './http/queue.ts'
export { PauseController, PauseSignal } from './pause/pause.ts'
export { resumeUploads, type ResumeOptions, type ResumeUploads } from './resume/resume.ts'
export {
  memoryResumeStore,
  indexedDbResumeStore,
  defaultResumeStore,
  fileFingerprint,
  type ResumeRecord,
  type ResumeStore,
} from './resume/store.ts'
export type { Resumer, PartJournal, Prepared } from './resume/journal.ts'
export type { UploadState } from './pause/gate.ts'
export type { EndpointOptions, Progress, RetryEvent, TransferOptions } from './options.ts'
export type { Credentials, CredentialSource } from './s3/sign.ts'
export { xhrTransport, fetchTransport, type Transport, type HttpRequest, type HttpResponse } from './http/transport.ts'
export {
  UploadError,
  S3Error,
  EndpointError,
  NetworkError,
  UploadAbortedError,
  BodyError,
  isUploadError,
} from './errors.ts'
export { upload } from './upload.ts'
export type { UploadBody } from './flow/body.ts'
export { uploadPresigned } from './presigned.ts'
export { uploadWithToken } from './token.ts'
export type { UploadOptions } from './flow/request.ts'
// The wire protocol, for endpoints written by hand (ARCHITECTURE.md "Wire protocol").
export { DEFAULT_ENDPOINT } from '../protocol/wire.ts'
export type * from '../protocol/public-wire.ts'
