import type { PresignedReply, Strategy, TokenReply } from '../protocol/wire.ts'
import { type EndpointOptions, postToEndpoint } from './endpoint.ts'
import type { TransferOptions } from './options.ts'
import type { ObjectExtras } from './upload-object.ts'

/** `objectHeaders`/`uploadHeaders` (SSE-C, tags: `ObjectExtras`) work in token mode only. */
export interface UploadOptions extends TransferOptions, EndpointOptions, ObjectExtras {
  /** @default 'token' */
  strategy?: Strategy
  /** Extra fields merged into the endpoint request, handed to the server's `key` callback. */
  body?: Record<string, unknown>
  /** @default the File's name, or 'file' for a Blob */
  filename?: string
  /** @default the Blob's type */
  contentType?: string
}

/** The first request of every upload: the endpoint decides key, bucket and permission. */
export async function requestUpload(file: Blob, options: UploadOptions) {
  const strategy = options.strategy ?? 'token'
  const contentType = options.contentType ?? file.type
  const reply = await postToEndpoint<TokenReply | PresignedReply>(options, '', {
    ...options.body,
    filename: options.filename ?? (file as File).name ?? 'file',
    filetype: contentType,
    filesize: file.size,
    strategy,
    // The same marker in next-s3-upload's form, so its API routes understand the request.
    _nextS3: { strategy: strategy === 'presigned' ? 'presigned' : 'aws-sdk' },
  })
  return { reply, contentType }
}
