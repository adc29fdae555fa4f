import type { TestProject } from 'vitest/node'
import { startRgw } from '../../dev/rgw.ts'
import {
  createBucketsWithoutCors,
  createTestBuckets,
  type RgwStore,
  rgwStore,
  swiftStore,
  type TestStore,
} from '../../dev/stores.ts'
import { startSwift } from '../../dev/swift.ts'

declare module 'vitest' {
  export interface ProvidedContext {
    rgw: RgwStore
    swift: TestStore
  }
}

/**
 * One OpenStack Swift (2-8 s, started beside RGW) serves it too, as `inject('swift')`; missing
 * packages throw their apt-get line the same way.
 *
 * One Ceph RGW (~1.5 s to boot, more under load) serves the whole run; tests reach it with
 * `inject('rgw')`. If radosgw is not installed, startRgw throws the apt-get line to run: the
 * run fails, it never skips.
 */
export default async function setup(project: TestProject) {
  const [rgw, swift] = await Promise.allSettled([startRgw(), startSwift()])
  const stop = () => Promise.all([rgw, swift].map((started) => started.status === 'fulfilled' && started.value.stop()))
  if (rgw.status === 'rejected' || swift.status === 'rejected') {
    await stop()
    throw rgw.status === 'rejected' ? rgw.reason : (swift as PromiseRejectedResult).reason
  }
  const store = rgwStore(rgw.value)
  await createTestBuckets(store)
  project.provide('rgw', store)
  const swiftView = swiftStore(swift.value)
  await createBucketsWithoutCors(swiftView)
  project.provide('swift', swiftView)
  return stop
}
