import { upload } from '../../engine/index.ts'
import { runPage } from './browser-page.ts'

// Updraft as a page uses it: ask the same-origin upload API, then send to storage (XHR, Blob slices).
void runPage(async (body, { contender, partSize, queueSize }) => {
  await upload(body, {
    api: '/api/s3-upload',
    strategy: contender === 'updraft-token' ? 'token' : 'presigned',
    partSize,
    partConcurrency: queueSize,
    filename: 'bench.bin',
    contentType: 'application/octet-stream',
  })
})
