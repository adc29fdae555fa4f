// Issue 11 in real Chromium: the XHR transport's `ontimeout` was wired but never set, so a request
// that got no answer hung the upload. Now the engine's stall watchdog cancels the XHR and retries
// it; an abort settles at once while cleanup runs on. Through the fault proxy, cross-origin, on RGW,
// in Chromium and Firefox ESR.
import { ListMultipartUploadsCommand } from '@aws-sdk/client-s3'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { BROWSERS, type TestPage } from '../dev/browsers.ts'
import { type Fault, type FaultProxy, startFaultProxy } from '../dev/fault-proxy.ts'
import { readObject, sdkClient, sha256 } from '../dev/s3-client.ts'
import { useEnginePageIn } from './helpers/engine-page.ts'

const MiB = 1024 * 1024
const SIZE = 12 * MiB
const rgw = inject('rgw')
const admin = sdkClient(rgw)
let proxy: FaultProxy
/** Faults to hand out, in order, to requests of a step (`PUT ?partNumber`, `DELETE ?uploadId`…). */
let planned: Record<string, Fault[]> = {}

beforeAll(async () => {
  // Preflights (OPTIONS) pass untouched: the faults are on the requests themselves.
  proxy = await startFaultProxy({ target: rgw.endpoint, kind: 'storage', decide: ({ step }) => planned[step]?.shift() })
})

afterAll(async () => {
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
  /** In the order they happened in the page: `settled` (the promise), `cleanup` (onCleanup). */
  events: string[]
  cleanup?: string
}

function uploadInPage(page: TestPage, key: string, abortAfterBytes?: number): Promise<PageOutcome> {
  const target = {
    endpoint: proxy.url,
    region: rgw.region,
    bucket: rgw.bucket,
    key,
    forcePathStyle: true,
    credentials: rgw.credentials,
  }
  return page.evaluate(
    async ({ target, size, abortAfterBytes }) => {
      const { uploadObject } = (window as unknown as { updraft: typeof import('../engine/index.ts') }).updraft
      const bytes = Uint8Array.from({ length: size }, (_, i) => (i * 31) % 251)
      const controller = new AbortController()
      const outcome: PageOutcome = { progress: [], retries: 0, events: [] }
      let aborted = false
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
            if (abortAfterBytes !== undefined && loaded >= abortAfterBytes && !aborted) {
              aborted = true
              controller.abort()
            }
          },
          onRetry: () => void outcome.retries++,
          onCleanup: (error) => {
            outcome.cleanup = error === undefined ? 'done' : String(error)
            outcome.events.push('cleanup')
            cleanedUp()
          },
        })
        outcome.result = { key: result.key }
      } catch (error) {
        outcome.error = { name: (error as Error).name, message: (error as Error).message }
      }
      outcome.events.push('settled')
      await cleanupOver
      return outcome
    },
    { target, size: SIZE, abortAfterBytes },
  )
}

describe.each(BROWSERS)('in %s, XHR through a faulty network to RGW', (browser) => {
  let page: TestPage
  useEnginePageIn(browser, (engine) => ({ page } = engine))

  it('a part that gets no answer is cancelled after the stall timeout and retried; the object reads back byte-exact', async () => {
    const key = `browser-faults/${browser}/stall-${crypto.randomUUID()}.bin`
    planned = { 'PUT ?partNumber': ['stall', 'stall-mid-reply'] }
    const outcome = await uploadInPage(page, key)
    expect(outcome.error).toBeUndefined()
    expect(outcome.retries).toBe(2)
    expect(planned['PUT ?partNumber']).toEqual([])
    expect(outcome.progress.at(-1)).toBe(SIZE)
    expect(sha256(await readObject(admin, rgw.bucket, key))).toBe(sha256(pattern(SIZE)))
  })

  it('an abort settles at once while AbortMultipartUpload, stalled then answered, cleans up behind it', async () => {
    const key = `browser-faults/${browser}/abort-${crypto.randomUUID()}.bin`
    planned = { 'DELETE ?uploadId': ['stall'] }
    const outcome = await uploadInPage(page, key, 2 * MiB)
    expect(outcome.error).toEqual({ name: 'AbortError', message: 'Upload aborted' })
    // "At once" as an order: the promise settled while AbortMultipartUpload was still stalled
    // (its first try is cut after the 1.5 s stall timeout), and the cleanup finished after it.
    expect(outcome.events).toEqual(['settled', 'cleanup'])
    expect(planned['DELETE ?uploadId']).toEqual([])
    expect(outcome.cleanup).toBe('done')
    const listed = await admin.send(new ListMultipartUploadsCommand({ Bucket: rgw.bucket, Prefix: key }))
    expect(listed.Uploads ?? []).toEqual([])
  })
})
