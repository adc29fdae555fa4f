import { S3Client } from '@aws-sdk/client-s3'
import { createPresignedPost } from '@aws-sdk/s3-presigned-post'
import type { PresignedForm } from '../protocol/wire.ts'
import type { ResolvedConfig } from './config.ts'
import { PRESIGN_EXPIRES_IN, type SingleUpload, servingHeaders } from './presigned-urls.ts'
import { type Presign, type Signing, secondsLeft } from './presigner.ts'

/**
 * What a POST form writes the object with: the headers a PUT URL signs (server/presigned-urls.ts),
 * as form fields. The canned ACL is the `acl` field (`x-amz-acl` is a PUT's header); the copy
 * guard has no field, since a POST cannot copy.
 */
export function formFields(config: ResolvedConfig, contentType: string): Record<string, string> {
  const { 'x-amz-acl': acl, ...headers } = servingHeaders(config, contentType)
  return { ...headers, ...(acl && { acl }) }
}

/**
 * S3 POST forms (POST policies, through the SDK's `@aws-sdk/s3-presigned-post`), signed with the
 * same credentials as the PUT URLs: the policy names the exact key and the bucket, every field of
 * {@link formFields} with its exact value, a length of exactly `filesize` bytes, and expires as a
 * PUT URL does (cut to what the credentials have left). A store that enforces policies (AWS S3,
 * Ceph RGW) refuses any field the policy does not name, any other value, any other length.
 * Undefined when the signer cannot sign one (a directory bucket's session).
 */
export function createFormPresigner(config: ResolvedConfig, signer: () => Promise<Presign>) {
  // createPresignedPost takes a client for its credentials, region and endpoint rules: one per credential.
  const clients = new WeakMap<Signing, S3Client>()
  const clientFor = (signing: Signing) => {
    let client = clients.get(signing)
    if (!client) {
      client = new S3Client({
        region: signing.region,
        credentials: signing.credentials,
        ...(config.endpoint && { endpoint: config.endpoint }),
        forcePathStyle: config.forcePathStyle,
      })
      clients.set(signing, client)
    }
    return client
  }

  // The policy binds the size: only a declared one.
  return async ({
    key,
    contentType,
    filesize,
  }: SingleUpload & { filesize: number }): Promise<PresignedForm | undefined> => {
    const { signing } = await signer()
    if (!signing) return undefined
    const left = secondsLeft(signing.expires, new Date(), 'updraft: the credentials that sign POST forms have expired')
    const { url, fields } = await createPresignedPost(clientFor(signing), {
      Bucket: config.bucket,
      Key: key,
      Fields: formFields(config, contentType),
      Conditions: [['content-length-range', filesize, filesize]],
      Expires: Math.min(PRESIGN_EXPIRES_IN, left),
    })
    return { url, fields }
  }
}
