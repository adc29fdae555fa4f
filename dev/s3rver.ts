import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import S3rver from '@20minutes/s3rver'
import { BUCKET, BUCKET_WITHOUT_EXPOSED_ETAG, type TestStore } from './stores.ts'

/** s3rver accepts this fixed key pair and checks SigV4 signatures made with it. */
export const S3RVER_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' }

export interface S3rverInstance extends TestStore {
  name: 's3rver'
  stop(): Promise<void>
}

const corsXml = (exposeETag: boolean) => `<CORSConfiguration><CORSRule>
  <AllowedOrigin>*</AllowedOrigin>
  ${['GET', 'PUT', 'POST', 'DELETE', 'HEAD'].map((m) => `<AllowedMethod>${m}</AllowedMethod>`).join('')}
  <AllowedHeader>*</AllowedHeader>
  ${exposeETag ? '<ExposeHeader>ETag</ExposeHeader>' : ''}
  <MaxAgeSeconds>3000</MaxAgeSeconds>
</CORSRule></CORSConfiguration>`

/**
 * Starts s3rver on a free loopback port with its data in a fresh temporary folder. Cheap
 * (~50 ms), so each test file starts its own. Its buckets are configured up front because
 * s3rver has no PutBucketCors.
 */
export async function startS3rver(): Promise<S3rverInstance> {
  const directory = await mkdtemp(join(tmpdir(), 'updraft-s3rver-'))
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    vhostBuckets: false,
    configureBuckets: [
      { name: BUCKET, configs: [corsXml(true)] },
      { name: BUCKET_WITHOUT_EXPOSED_ETAG, configs: [corsXml(false)] },
    ],
  })
  const { port } = (await server.run()) as { port: number }
  return {
    name: 's3rver',
    endpoint: `http://127.0.0.1:${port}`,
    region: 'us-east-1',
    credentials: S3RVER_CREDENTIALS,
    bucket: BUCKET,
    bucketWithoutExposedETag: BUCKET_WITHOUT_EXPOSED_ETAG,
    async stop() {
      await server.close()
      await rm(directory, { recursive: true, force: true })
    },
  }
}
