import { TOKEN_CACHE_CONTROL, type TokenReply, type UploadResult } from '../../protocol/wire.ts'
import type { TransferOptions } from '../options.ts'
import { uploadObject } from '../upload-object.ts'

/** Token mode: the endpoint handed out STS credentials scoped to one key; sign every request here. */
export function sendWithToken(
  file: Blob,
  reply: TokenReply,
  contentType: string,
  options: TransferOptions,
): Promise<UploadResult> {
  const { AccessKeyId, SecretAccessKey, SessionToken } = reply.token.Credentials
  return uploadObject(file, {
    ...options,
    bucket: reply.bucket,
    key: reply.key,
    region: reply.region,
    endpoint: reply.endpoint,
    forcePathStyle: reply.forcePathStyle,
    credentials: { accessKeyId: AccessKeyId, secretAccessKey: SecretAccessKey, sessionToken: SessionToken },
    contentType,
    cacheControl: TOKEN_CACHE_CONTROL,
  })
}
