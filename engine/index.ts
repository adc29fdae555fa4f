// `updraft-s3`: what a page calls. Everything exported here is public API (api/updraft-s3.api.md),
// and exported by no other entry: each opt-in has its own (`updraft-s3/checksums`, `/sse-c`, `/tags`,
// `/aws-endpoints`, `/node-transport`), one-mode pages import `updraft-s3/token` or `/presigned`,
// and the wire types live in `updraft-s3/protocol`. The engine's modules share their helpers by
// importing each other directly.

export type { ObjectLocation } from '../protocol/object-url.ts'
export type { UploadResult } from '../protocol/wire.ts'
export type { UploadBody } from './core/body.ts'
export {
  ApiError,
  BodyError,
  isUploadError,
  NetworkError,
  S3Error,
  UploadAbortedError,
  UploadError,
} from './core/errors.ts'
export type { ApiOptions, Progress, RetryEvent, RetryOptions, TransferOptions } from './core/options.ts'
export { PauseController, PauseSignal } from './core/pause.ts'
export type { UploadState } from './core/upload-state.ts'
export type { UploadOptions } from './modes/request.ts'
export { type ResumeOptions, type ResumeUploads, resumeUploads } from './resume/resume.ts'
export type { ResumeRecord, ResumeStore } from './resume/resume-store.ts'
export type { CredentialSource, Credentials } from './s3/sign.ts'
export { createQueue, type Queue } from './transport/queue.ts'
export {
  fetchTransport,
  type HttpRequest,
  type HttpResponse,
  type Transport,
  xhrTransport,
} from './transport/transport.ts'
export { upload } from './upload.ts'
export { type ObjectExtras, type ObjectTarget, uploadObject } from './upload-object.ts'
