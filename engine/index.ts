// `updraft-s3`: the browser upload engine. Everything exported here is public API (api/updraft-s3.api.md);
// helpers the engine shares between its own modules are imported from those modules directly.
export { uploadObject, type ObjectTarget, type ObjectExtras, type ChecksumRun, type ChecksumTarget } from './upload-object.ts'
export { sseCustomerKey } from './sse-c.ts'
export { taggingHeaders, putObjectTagging } from './tags.ts'
export { checksum, compositeChecksum, type ChecksumAlgorithm } from './checksums/index.ts'
export { planParts, type PartPlan } from '../protocol/parts.ts'
export { MIN_PART_SIZE, MAX_PARTS, MAX_PART_SIZE, MAX_OBJECT_SIZE } from '../protocol/limits.ts'
export type { ObjectLocation } from '../protocol/object-url.ts'
export { createQueue, type Queue } from './queue.ts'
export { PauseController, PauseSignal } from './pause.ts'
export { resumeUploads, type ResumeOptions, type ResumeUploads } from './resume.ts'
export {
  memoryResumeStore,
  indexedDbResumeStore,
  defaultResumeStore,
  fileFingerprint,
  type ResumeRecord,
  type ResumeStore,
} from './resume-store.ts'
export type { Resumer, PartJournal, Prepared } from './journal.ts'
export type { UploadState } from './gate.ts'
export type { EndpointOptions, Progress, RetryEvent, TransferOptions } from './options.ts'
export type { Credentials, CredentialSource } from './signer.ts'
export { xhrTransport, fetchTransport, type Transport, type HttpRequest, type HttpResponse } from './transport.ts'
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
export type { UploadBody } from './body.ts'
export { uploadPresigned } from './upload-presigned.ts'
export { uploadWithToken } from './upload-with-token.ts'
export type { UploadOptions } from './request-upload.ts'
// The wire protocol, for endpoints written by hand (ARCHITECTURE.md "Wire protocol").
export { DEFAULT_ENDPOINT } from '../protocol/wire.ts'
export type * from '../protocol/public-wire.ts'
