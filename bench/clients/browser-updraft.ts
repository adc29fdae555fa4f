import { checksum } from '../../engine/checksums/index.ts'
import { uploadObject } from '../../engine/index.ts'
import { runPage } from './browser-page.ts'

// Default transport in a page: XMLHttpRequest, with the Blob slices as bodies.
void runPage(async (body, { target, partSize, queueSize, checksum: algorithm }) => {
  await uploadObject(body, { ...target, forcePathStyle: true, partSize, queueSize, ...(algorithm ? checksum(algorithm) : {}) })
})
