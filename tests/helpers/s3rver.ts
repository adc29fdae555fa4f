import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import S3rver from '@20minutes/s3rver'

/** s3rver accepts this fixed key pair and checks SigV4 signatures made with it. */
export const S3RVER_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' }

export interface S3rverInstance {
  endpoint: string
  region: string
  credentials: typeof S3RVER_CREDENTIALS
  /** CORS allows any origin and exposes ETag. */
  bucket: string
  /** CORS allows any origin but does not expose ETag: browsers cannot read part ETags. */
  bucketWithoutExposedETag: string
  stop(): Promise<void>
}

const corsXml = (exposeETag: boolean) => `<CORSConfiguration><CORSRule>
  <AllowedOrigin>*</AllowedOrigin>
  ${['GET', 'PUT', 'POST', 'DELETE', 'HEAD'].map((m) => `<AllowedMethod>${m}</AllowedMethod>`).join('')}
  <AllowedHeader>*</AllowedHeader>
  ${exposeETag ? '<ExposeHeader>ETag</ExposeHeader>' : ''}
  <MaxAgeSeconds>3000</MaxAgeSeconds>
</CORSRule></CORSConfiguration>`

/** Starts s3rver on a free loopback port with its data in a fresh temporary folder. */
export async function startS3rver(): Promise<S3rverInstance> {
  const directory = await mkdtemp(join(tmpdir(), 'updraft-s3rver-'))
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    vhostBuckets: false,
    configureBuckets: [
      { name: 'uploads', configs: [corsXml(true)] },
      { name: 'no-expose', configs: [corsXml(false)] },
    ],
  })
  const { port } = (await server.run()) as { port: number }
  return {
    endpoint: `http://127.0.0.1:${port}`,
    region: 'us-east-1',
    credentials: S3RVER_CREDENTIALS,
    bucket: 'uploads',
    bucketWithoutExposedETag: 'no-expose',
    async stop() {
      await server.close()
      await rm(directory, { recursive: true, force: true })
    },
  }
}
