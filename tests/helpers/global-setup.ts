import type { TestProject } from 'vitest/node'
import { startRgw } from './rgw.ts'
import { createTestBuckets, type RgwStore, rgwStore } from './stores.ts'

declare module 'vitest' {
  export interface ProvidedContext {
    rgw: RgwStore
  }
}

/**
 * One Ceph RGW (~1.5 s to boot, more under load) serves the whole run; tests reach it with
 * `inject('rgw')`. If radosgw is not installed, startRgw throws the apt-get line to run: the
 * run fails, it never skips.
 */
export default async function setup(project: TestProject) {
  const rgw = await startRgw()
  const store = rgwStore(rgw)
  await createTestBuckets(store)
  project.provide('rgw', store)
  return () => rgw.stop()
}
