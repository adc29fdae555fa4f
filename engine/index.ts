export { uploadObject, type ObjectTarget } from './upload-object.ts'
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
