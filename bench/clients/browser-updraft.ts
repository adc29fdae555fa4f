import { uploadObject } from '../../engine/index.ts'
import { checksum } from '../../engine/opt-ins/checksums/index.ts'
import { runPage } from './browser-page.ts'

// Default transport in a page: XMLHttpRequest, with the Blob slices as bodies.
void runPage(async (body, { target, partSize, queueSize, checksum: algorithm, checksumThread }) => {
  // As a page without workers: updraft-s3/checksums then hashes on the main thread.
  if (checksumThread === 'main') Reflect.deleteProperty(globalThis, 'Worker')
  await uploadObject(body, {
    ...target,
    forcePathStyle: true,
    partSize,
    partConcurrency: queueSize,
    ...(algorithm ? checksum(algorithm) : {}),
  })
})
