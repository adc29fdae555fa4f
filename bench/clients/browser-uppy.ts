import AwsS3 from '@uppy/aws-s3'
import Uppy from '@uppy/core'
import type { TokenReply } from '../../protocol/wire.ts'
import { runPage } from './browser-page.ts'

/**
 * @uppy/aws-s3 wired to the same upload API the way its docs wire a backend: `getCredentials` asks
 * it for temporary credentials (token mode), and Uppy signs its own requests. The same part size,
 * multipart threshold and parallelism as Updraft's run.
 */
void runPage(async (body, { target, partSize, queueSize }) => {
  const uppy = new Uppy({ autoProceed: false })
  uppy.use(AwsS3, {
    s3Endpoint: `${target.endpoint}/${target.bucket}`,
    getCredentials: async () => {
      const response = await fetch('/api/s3-upload', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          filename: 'bench.bin',
          filetype: 'application/octet-stream',
          filesize: body.size,
          strategy: 'token',
        }),
      })
      const { token, region } = (await response.json()) as TokenReply
      const { AccessKeyId, SecretAccessKey, SessionToken, Expiration } = token.Credentials
      return {
        credentials: {
          accessKeyId: AccessKeyId,
          secretAccessKey: SecretAccessKey,
          sessionToken: SessionToken,
          expiration: Expiration,
        },
        region,
      }
    },
    shouldUseMultipart: (file: { size: number | null }) => (file.size ?? 0) > partSize,
    getChunkSize: () => partSize,
    limit: queueSize,
  } as never)
  uppy.addFile({ name: 'bench.bin', type: 'application/octet-stream', data: body })
  const result = await uppy.upload()
  if (!result || result.failed?.length) throw new Error(`Uppy: ${result?.failed?.[0]?.error ?? 'no result'}`)
  uppy.destroy()
})
