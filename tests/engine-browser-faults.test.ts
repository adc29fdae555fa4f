// Issue 11 in real Chromium: the XHR transport's `ontimeout` was wired but never set, so a request
// that got no answer hung the upload. Now the engine's stall watchdog cancels the XHR and retries
// it; an abort settles at once while cleanup runs on. Through the fault proxy, cross-origin, on RGW.
import { ListMultipartUploadsCommand } from '@aws-sdk/client-s3'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { openEnginePage, type EnginePage } from './helpers/engine-page.ts'
import { type Fault, type FaultProxy, startFaultProxy } from './helpers/fault-proxy.ts'
import { readObject, sdkClient, sha256 } from './helpers/s3-client.ts'

const MiB = 1024 * 1024
const SIZE = 12 * MiB
const rgw = inject('rgw')
const admin = sdkClient(rgw)
let engine: EnginePage
let page: Page
let proxy: FaultProxy
/** Faults to hand out, in order, to requests of a step (`PUT ?partNumber`, `DELETE ?uploadId`…). */
let planned: Record<string, Fault[]> = {}

beforeAll(async () => {
  // Preflights (OPTIONS) pass untouched: the faults are on the requests themselves.
  proxy = await startFaultProxy({ target: rgw.endpoint, kind: 'storage', decide: ({ step }) => planned[step]?.shift() })
  engine = await openEnginePage()
  page = engine.page
})

afterAll(async () => {
  await engine?.close()
  await proxy?.stop()
  admin.destroy()
})

/** The same bytes the page generates. */
const pattern = (size: number) => Uint8Array.from({ length: size }, (_, i) => (i * 31) % 251)

interface PageOutcome {
  result?: { key: string }
  error?: { name: string; message: string }
  progress: number[]
  retries: number
  /** ms from abort() to the promise settling. */
  abortToSettle?: number
  cleanup?: string
}

function uploadInPage(key: string, abortAfterBytes?: number): Promise<PageOutcome> {
  const target = { endpoint: proxy.url, region: rgw.region, bucket: rgw.bucket, key, forcePathStyle: true, credentials: rgw.credentials }
  return page.evaluate(
    async ({ target, size, abortAfterBytes }) => {
      const { uploadObject } = (window as unknown as { updraft: typeof import('../engine/index.ts') }).updraft
      const bytes = Uint8Array.from({ length: size }, (_, i) => (i * 31) % 251)
      const controller = new AbortController()
      const outcome: PageOutcome = { progress: [], retries: 0 }
      let abortedAt = 0
      let cleanedUp!: () => void
      const cleanupOver = new Promise<void>((resolve) => (cleanedUp = resolve))
      try {
        const result = await uploadObject(new Blob([bytes]), {
          ...target,
          partConcurrency: 2,
          stallTimeout: 1500,
          retry: { delay: 20 },
          signal: controller.signal,
          onProgress: ({ loaded }) => {
            outcome.progress.push(loaded)
            if (abortAfterBytes !== undefined && loaded >= abortAfterBytes && !abortedAt) {
              abortedAt = performance.now()
              controller.abort()
            }
          },
          onRetry: () => void outcome.retries++,
          onCleanup: (error) => {
            outcome.cleanup = error === undefined ? 'done' : String(error)
            cleanedUp()
          },
        })
        outcome.result = { key: result.key }
      } catch (error) {
        outcome.error = { name: (error as Error).name, message: (error as Error).message }
      }
      if (abortedAt) outcome.abortToSettle = performance.now() - abortedAt
      await cleanupOver
      return outcome
    },
    { target, size: SIZE, abortAfterBytes },
  )
}

describe('in Chromium, XHR through a faulty network to RGW', () => {
  it('a part that gets no answer is cancelled after the stall timeout and retried; the object reads back byte-exact', async () => {
    const key = `browser-faults/stall-${crypto.randomUUID()}.bin`
    planned = { 'PUT ?partNumber': ['stall', 'stall-mid-reply'] }
    const outcome = await uploadInPage(key)
    expect(outcome.error).toBeUndefined()
    expect(outcome.retries).toBe(2)
    expect(planned['PUT ?partNumber']).toEqual([])
    expect(outcome.progress.at(-1)).toBe(SIZE)
    expect(sha256(await readObject(admin, rgw.bucket, key))).toBe(sha256(pattern(SIZE)))
  })

  it('an abort settles at once while AbortMultipartUpload, stalled then answered, cleans up behind it', async () => {
    const key = `browser-faults/abort-${crypto.randomUUID()}.bin`
    planned = { 'DELETE ?uploadId': ['stall'] }
    const outcome = await uploadInPage(key, 2 * MiB)
    expect(outcome.error).toEqual({ name: 'AbortError', message: 'Upload aborted' })
    // Generous: the bound under test is "at once", not waiting out the stalled cleanup (1.5 s).
    expect(outcome.abortToSettle).toBeLessThan(500)
    expect(outcome.cleanup).toBe('done')
    const listed = await admin.send(new ListMultipartUploadsCommand({ Bucket: rgw.bucket, Prefix: key }))
    expect(listed.Uploads ?? []).toEqual([])
  })
})

