import type { S3Client } from '@aws-sdk/client-s3'
import { afterAll, beforeAll, inject } from 'vitest'
import { sdkClient } from '../../dev/s3-client.ts'
import { S3RVER_CREDENTIALS, type S3rverInstance, startS3rver } from '../../dev/s3rver.ts'
import { recordCalls, serveHandler, type WebHandler } from '../../dev/serve-handler.ts'
import { storeConfig, type TestStore } from '../../dev/stores.ts'
import { type StsStandIn, startStsServer } from '../../dev/sts-server.ts'
import { createUploadHandler, type UploadHandlerConfig } from '../../server/index.ts'

/**
 * For end-to-end test files: an s3rver of their own beside the run's RGW (with an STS stand-in,
 * since s3rver has none), handlers served over real HTTP, and SDK clients to read back with — all
 * closed after the file's tests.
 */
export function uploadApiFixture() {
  let s3rver: S3rverInstance
  let sts: StsStandIn
  const closers: Array<() => unknown> = []
  beforeAll(async () => {
    s3rver = await startS3rver()
    // It hands out s3rver's own key, so token mode runs on s3rver too.
    sts = await startStsServer({ caller: S3RVER_CREDENTIALS, issue: S3RVER_CREDENTIALS })
  })
  afterAll(async () => {
    await Promise.all(closers.map((close) => close()))
    await sts?.stop()
    await s3rver?.stop()
  })

  /** Keeps an SDK client (a reader, or one a test builds itself) until the file ends. */
  const track = <T extends S3Client>(client: T): T => {
    closers.push(() => client.destroy())
    return client
  }

  /** `handler` on a real loopback port, recording what the engine asked it. */
  async function serve(handler: WebHandler) {
    const recorded = recordCalls(handler)
    const server = await serveHandler(recorded.handler)
    closers.push(() => server.close())
    return { api: server.api, calls: recorded.calls }
  }

  return {
    s3rver: (): TestStore => s3rver,
    stores: { s3rver: (): TestStore => s3rver, rgw: (): TestStore => inject('rgw') },
    serve,
    track,
    readerFor: (store: TestStore) => track(sdkClient(store)),
    /** Where token mode gets credentials for `store`: RGW's own STS (AssumeRole), or the stand-in for s3rver. */
    tokenSts(store: TestStore): NonNullable<UploadHandlerConfig['sts']> {
      if (store.name !== 'rgw') return { mode: 'federation', endpoint: sts.endpoint }
      const rgw = inject('rgw')
      return { mode: 'assume-role', roleArn: rgw.roleArn, endpoint: rgw.endpoint }
    },
    /** Updraft's upload API for `store` (plus `extra` config), served, with a reader for the store. */
    async uploadApiFor(store: TestStore, extra: UploadHandlerConfig = {}) {
      const served = await serve(createUploadHandler(storeConfig(store, extra)))
      return { ...served, client: track(sdkClient(store)) }
    },
  }
}
