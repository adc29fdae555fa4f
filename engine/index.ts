export { uploadObject, type ObjectTarget, type ObjectExtras } from './upload-object.ts'
export { sseCustomerKey } from './sse-c.ts'
export { taggingHeaders, putObjectTagging } from './tags.ts'
export { planParts, partRange, type PartPlan, MIN_PART_SIZE, MAX_PARTS, MAX_PART_SIZE, MAX_OBJECT_SIZE } from './parts.ts'
export { createQueue, type Queue } from './queue.ts'
export { defaultOptions, type Progress, type TransferOptions } from './options.ts'
export type { UploadResult } from './transfer.ts'
export type { Credentials } from './signer.ts'
export type { ObjectLocation } from './s3.ts'
export { xhrTransport, fetchTransport, type Transport, type HttpRequest, type HttpResponse } from './transport.ts'
export {
  UploadError,
  S3Error,
  EndpointError,
  NetworkError,
  UploadAbortedError,
  isUploadError,
} from './errors.ts'
export { upload } from './upload.ts'
export { uploadPresigned } from './presigned-entry.ts'
export { uploadWithToken } from './token-entry.ts'
export type { UploadOptions } from './request-upload.ts'
export { DEFAULT_ENDPOINT } from './endpoint.ts'
export type * from './protocol.ts'
export { TOKEN_CACHE_CONTROL, PRESIGNED_CACHE_CONTROL } from './protocol.ts'
