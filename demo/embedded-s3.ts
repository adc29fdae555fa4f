import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import type { Server } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import S3rver from '@20minutes/s3rver'

/** s3rver accepts only this key pair, and checks SigV4 signatures made with it. */
export const EMBEDDED_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' }
export const EMBEDDED_BUCKET = 'uploads'
export const EMBEDDED_REGION = 'us-east-1'

export interface EmbeddedS3Options {
  /** Where objects are kept. @default a fresh temporary folder, removed by `close()` */
  directory?: string
  /** @default 0: a free port */
  port?: number
}

export interface EmbeddedS3 {
  /** `http://127.0.0.1:PORT`; path-style URLs only (no virtual hosts on loopback). */
  endpoint: string
  region: string
  bucket: string
  credentials: { accessKeyId: string; secretAccessKey: string }
  directory: string
  close(): Promise<void>
}

/**
 * The page uploads to s3rver cross-origin, so the bucket's CORS rule allows any origin (s3rver
 * listens on loopback only), the methods of single and multipart uploads, any request header, and
 * exposes ETag: without it the page cannot read part ETags and multipart fails.
 */
const CORS = `<CORSConfiguration><CORSRule>
  <AllowedOrigin>*</AllowedOrigin>
  ${['GET', 'HEAD', 'PUT', 'POST', 'DELETE'].map((method) => `<AllowedMethod>${method}</AllowedMethod>`).join('')}
  <AllowedHeader>*</AllowedHeader>
  <ExposeHeader>ETag</ExposeHeader>
  <MaxAgeSeconds>3000</MaxAgeSeconds>
</CORSRule></CORSConfiguration>`

/**
 * `@20minutes/s3rver` on 127.0.0.1 with one bucket, created with its CORS rule up front (s3rver
 * has no PutBucketCors). Data from an earlier run in `directory` stays; the rule is re-applied.
 */
export async function startEmbeddedS3({ directory, port = 0 }: EmbeddedS3Options = {}): Promise<EmbeddedS3> {
  const temporary = directory === undefined
  const folder = directory ?? (await mkdtemp(join(tmpdir(), 'updraft-s3-')))
  await mkdir(folder, { recursive: true })
  const server = new S3rver({
    address: '127.0.0.1',
    port,
    silent: true,
    directory: folder,
    vhostBuckets: false,
    configureBuckets: [{ name: EMBEDDED_BUCKET, configs: [CORS] }],
  })
  const address = await server.run().catch(async (error: unknown) => {
    if (temporary) await rm(folder, { recursive: true, force: true })
    throw error
  })
  return {
    endpoint: `http://127.0.0.1:${address.port}`,
    region: EMBEDDED_REGION,
    bucket: EMBEDDED_BUCKET,
    credentials: EMBEDDED_CREDENTIALS,
    directory: folder,
    async close() {
      // A browser keeps connections open (and an upload may be mid-way): close() would wait for them.
      ;(server as unknown as { httpServer?: Server }).httpServer?.closeAllConnections()
      await server.close()
      if (temporary) await rm(folder, { recursive: true, force: true })
    },
  }
}
