import { CreateBucketCommand, PutBucketCorsCommand } from '@aws-sdk/client-s3'
import type { UploadHandlerConfig } from '../server/index.ts'
import type { RgwServer } from './rgw.ts'
import { type StoreAccess, sdkClient } from './s3-client.ts'
import type { SwiftServer } from './swift.ts'

/** A running S3-compatible store as the tests see it, whichever server it is. */
export interface TestStore extends StoreAccess {
  name: 's3rver' | 'rgw' | 'swift'
  /** CORS allows any origin and exposes ETag. */
  bucket: string
  /** CORS allows any origin but hides ETag from browsers (on Swift, which cannot hide it, a second bucket that exposes it too). */
  bucketWithoutExposedETag: string
}

/** RGW also issues STS credentials for this role (AssumeRole). */
export interface RgwStore extends TestStore {
  name: 'rgw'
  roleArn: string
}

export const BUCKET = 'uploads'
export const BUCKET_WITHOUT_EXPOSED_ETAG = 'no-expose'

/** The test view of a started RGW (dev/rgw.ts), its buckets named as everywhere. */
export const rgwStore = (rgw: RgwServer): RgwStore => ({
  name: 'rgw',
  endpoint: rgw.endpoint,
  region: rgw.region,
  credentials: { accessKeyId: rgw.accessKeyId, secretAccessKey: rgw.secretAccessKey },
  bucket: BUCKET,
  bucketWithoutExposedETag: BUCKET_WITHOUT_EXPOSED_ETAG,
  roleArn: rgw.roleArn,
})

/** The test view of a started Swift (dev/swift.ts): CORS is its proxy's config, the same for every bucket. */
export const swiftStore = (swift: SwiftServer): TestStore => ({
  name: 'swift',
  endpoint: swift.endpoint,
  region: swift.region,
  credentials: { accessKeyId: swift.accessKeyId, secretAccessKey: swift.secretAccessKey },
  bucket: BUCKET,
  bucketWithoutExposedETag: BUCKET_WITHOUT_EXPOSED_ETAG,
})

/** Creates the two test buckets on a store without PutBucketCors (Swift answers 501: CORS is set in its proxy's config). */
export async function createBucketsWithoutCors(store: StoreAccess): Promise<void> {
  const client = sdkClient(store)
  for (const bucket of [BUCKET, BUCKET_WITHOUT_EXPOSED_ETAG])
    await client.send(new CreateBucketCommand({ Bucket: bucket }))
  client.destroy()
}

/** Creates the two test buckets with their CORS rules, through the S3 API. */
export async function createTestBuckets(store: StoreAccess): Promise<void> {
  const client = sdkClient(store)
  for (const [bucket, exposeETag] of [
    [BUCKET, true],
    [BUCKET_WITHOUT_EXPOSED_ETAG, false],
  ] as const) {
    await client.send(new CreateBucketCommand({ Bucket: bucket }))
    await client.send(
      new PutBucketCorsCommand({
        Bucket: bucket,
        CORSConfiguration: {
          CORSRules: [
            {
              AllowedOrigins: ['*'],
              AllowedMethods: ['GET', 'PUT', 'POST', 'DELETE', 'HEAD'],
              AllowedHeaders: ['*'],
              ExposeHeaders: exposeETag ? ['ETag'] : [],
              MaxAgeSeconds: 3000,
            },
          ],
        },
      }),
    )
  }
  client.destroy()
}

/** `uploadObject`'s target for `key` on a test store, with the store's own keys, path-style. */
export const directTarget = <T extends object = object>(store: TestStore, key: string, extra?: T) => ({
  bucket: store.bucket,
  key,
  region: store.region,
  endpoint: store.endpoint,
  forcePathStyle: true,
  credentials: store.credentials,
  ...(extra as T),
})

/** The upload API's config for a test store: its keys, bucket and address, path-style. */
export const storeConfig = (store: TestStore, extra: UploadHandlerConfig = {}): UploadHandlerConfig => ({
  ...store.credentials,
  bucket: store.bucket,
  region: store.region,
  endpoint: store.endpoint,
  forcePathStyle: true,
  ...extra,
})

/** The upload API's S3_UPLOAD_* settings for a test store, as an app's environment or a worker's bindings. */
export const storeEnv = (
  store: Pick<TestStore, 'credentials' | 'bucket' | 'region' | 'endpoint'>,
  extra: Record<string, string> = {},
): Record<string, string> => ({
  S3_UPLOAD_KEY: store.credentials.accessKeyId,
  S3_UPLOAD_SECRET: store.credentials.secretAccessKey,
  S3_UPLOAD_BUCKET: store.bucket,
  S3_UPLOAD_REGION: store.region,
  S3_UPLOAD_ENDPOINT: store.endpoint,
  S3_UPLOAD_FORCE_PATH_STYLE: 'true',
  ...extra,
})
