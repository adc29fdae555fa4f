// Issue 35: a setting missing where the handler is created on the first request (Next.js, whose
// `next build` loads the route without its settings). Was: the route threw, the framework answered
// a plain 500, and the page retried it for 27 s. Now createLazyUploadHandler answers the fault
// no retry heals, 500 ServerMisconfigured, and logs the missing settings with doctor, once; the
// engine (over real HTTP, node:http) asks once and says the page's one sentence.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { type S3rverInstance, startS3rver } from '../dev/s3rver.ts'
import { recordCalls, type ServedHandler, serveHandler } from '../dev/serve-handler.ts'
import { storeEnv } from '../dev/stores.ts'
import { ApiError, upload } from '../engine/index.ts'
import { nodeTransport } from '../engine/transport/node-transport.ts'
import { createLazyUploadHandler } from '../server/index.ts'
import { errorMessage } from '../src/messages.ts'

let store: S3rverInstance
beforeAll(async () => {
  store = await startS3rver()
})
afterAll(() => store?.stop())

describe('createLazyUploadHandler with a setting missing', () => {
  let served: ServedHandler
  afterAll(() => served?.close())

  it('answers 500 ServerMisconfigured, which upload() does not retry; one log line names the setting and doctor; settings given later are taken up', async () => {
    // The store's settings but the bucket: as a .env file with one line lost.
    const { S3_UPLOAD_BUCKET: _bucket, ...env } = storeEnv(store, { S3_UPLOAD_FORCE_PATH_STYLE: 'true' })
    for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value)
    vi.stubEnv('S3_UPLOAD_BUCKET', '')
    const lines: string[] = []
    const { handler, calls } = recordCalls(
      createLazyUploadHandler({ logger: { error: (_obj, msg) => void lines.push(msg ?? '') } }),
    )
    served = await serveHandler(handler)
    try {
      const file = new Blob([new Uint8Array(40 * 1024 * 1024)])
      for (const body of [new Blob(['a small file']), file]) {
        const failed = await upload(body, { api: served.api, strategy: 'presigned', transport: nodeTransport }).catch(
          (error: unknown) => error,
        )
        expect(failed).toBeInstanceOf(ApiError)
        expect(failed).toMatchObject({
          status: 500,
          code: 'ServerMisconfigured',
          message: expect.stringMatching(/^The upload API is misconfigured: a setting is missing or invalid\./),
        })
        expect(errorMessage(failed)).toBe(
          "This site's upload service is misconfigured — its owner has to fix it; retrying won't help",
        )
      }
      // One request per upload: none retried.
      expect(calls.map(({ route, status }) => [route, status])).toEqual([
        ['', 500],
        ['', 500],
      ])
      expect(lines).toEqual([
        expect.stringMatching(
          /^updraft: missing settings: bucket \(S3_UPLOAD_BUCKET\)\. Run npx updraft-s3 doctor to check every setting\. Uploads are answered 500 ServerMisconfigured until then/,
        ),
      ])

      // Fixed without a restart (a framework reloading .env): the next request is answered.
      vi.stubEnv('S3_UPLOAD_BUCKET', store.bucket)
      const result = await upload(new Blob(['now it goes']), {
        api: served.api,
        strategy: 'presigned',
        transport: nodeTransport,
      })
      expect(result.bucket).toBe(store.bucket)
    } finally {
      vi.unstubAllEnvs()
    }
  })
})
