// `updraft-s3`: what a page calls. Everything exported here is public API (api/updraft-s3.api.md),
// and exported by no other entry: each opt-in has its own (`updraft-s3/checksums`, `/sse-c`, `/tags`,
// `/aws-endpoints`, `/node-transport`), one-mode pages import `updraft-s3/token` or `/presigned`,
// and the wire types live in `updraft-s3/protocol`. The engine's modules share their helpers by
// importing each other directly.
export { upload } from './upload.ts'
export { uploadObject, type ObjectTarget, type ObjectExtras } from './upload-object.ts'
export type { ObjectLocation } from '../protocol/object-url.ts'
export type { UploadOptions } from './modes/request.ts'
export type { UploadBody } from './core/body.ts'
export type { UploadResult } from '../protocol/wire.ts'
export type { ApiOptions, TransferOptions, Progress, RetryEvent, RetryOptions } from './core/options.ts'
export { PauseController, PauseSignal } from './core/pause.ts'
export type { UploadState } from './core/upload-state.ts'
export { resumeUploads, type ResumeOptions, type ResumeUploads } from './resume/resume.ts'
export type { ResumeRecord, ResumeStore } from './resume/resume-store.ts'
export { createQueue, type Queue } from './transport/queue.ts'
export { xhrTransport, fetchTransport, type Transport, type HttpRequest, type HttpResponse } from './transport/transport.ts'
export type { Credentials, CredentialSource } from './s3/sign.ts'
export { UploadError, S3Error, ApiError, NetworkError, UploadAbortedError, BodyError, isUploadError } from './core/errors.ts'
