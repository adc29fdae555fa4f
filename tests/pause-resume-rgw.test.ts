// Issue 13 end to end: pause mid-upload and resume against Ceph RGW, every storage request
// logged by the fault proxy. Byte-exact read-back; no part that storage accepted is sent again.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { PauseController, upload, uploadObject, type TransferOptions } from '../engine/index.ts'
import { MIN_PART_SIZE } from '../protocol/limits.ts'
import { useEndpointFixture } from './helpers/endpoint-fixture.ts'
import { type FaultProxy, type LoggedRequest, startFaultProxy } from './helpers/fault-proxy.ts'
import { readObject, sdkClient, sha256, testBytes } from './helpers/s3-client.ts'
import { directTarget } from './helpers/stores.ts'

const rgw = inject('rgw')
const reader = sdkClient(rgw)
const SIZE = 6 * MIN_PART_SIZE + 12345
const { endpointFor } = useEndpointFixture()
let proxy: FaultProxy

beforeAll(async () => {
  proxy = await startFaultProxy({ target: rgw.endpoint, kind: 'storage' })
})
afterAll(async () => {
  await proxy?.stop()
  reader.destroy()
})

/** Part PUTs of `key` the page sent (the endpoint's own SDK calls are left out). */
const partPuts = (key: string) =>
  proxy.log.filter((entry) => entry.step === 'PUT ?partNumber' && decodeURIComponent(entry.url).includes(key))
const partNumberOf = (entry: LoggedRequest) => Number(new URL(entry.url, 'http://x').searchParams.get('partNumber'))

/** Bytes sent again for parts storage had already accepted (200) earlier: the goal is 0. */
function resentFinishedBytes(puts: LoggedRequest[]): number {
  const finished = new Set<number>()
  let resent = 0
  for (const put of puts) {
    if (finished.has(partNumberOf(put))) resent += put.bytes
    if (put.status === 200) finished.add(partNumberOf(put))
  }
  return resent
}

/** Pauses once 1.5 parts have gone, checks that storage then hears nothing, and resumes. */
function pauseMidway() {
  const pauses = new PauseController()
  let paused!: () => void
  const pausedOnce = new Promise<void>((resolve) => (paused = resolve))
  const options: TransferOptions = {
    partConcurrency: 2,
    pauseSignal: pauses.signal,
    onProgress: ({ loaded }) => {
      if (loaded >= 1.5 * MIN_PART_SIZE && !pauses.signal.paused && !pausedAt) {
        pausedAt = proxy.log.length
        pauses.pause()
        paused()
      }
    },
  }
  let pausedAt = 0
  async function holdThenResume() {
    await pausedOnce
    // Let the cancelled requests wind down, then watch: nothing may reach storage while paused.
    await new Promise((resolve) => setTimeout(resolve, 300))
    const quiet = proxy.log.length
    await new Promise((resolve) => setTimeout(resolve, 1500))
    const duringPause = proxy.log.slice(quiet)
    pauses.resume()
    return duringPause
  }
  return { options, holdThenResume }
}

describe('pause and resume on Ceph RGW, through the logging proxy', () => {
  it('own credentials: pause mid-upload, resume — byte-exact, each part accepted once, no finished part re-sent, no abort', async () => {
    const key = `pause/${crypto.randomUUID()}.bin`
    const bytes = testBytes(SIZE, 13)
    const { options, holdThenResume } = pauseMidway()
    const done = uploadObject(new Blob([bytes]), { ...directTarget({ ...rgw, endpoint: proxy.url }, key), ...options })
    const duringPause = await holdThenResume()
    await done

    expect(duringPause).toEqual([])
    expect(sha256(await readObject(reader, rgw.bucket, key))).toBe(sha256(bytes))
    const puts = partPuts(key)
    const accepted = puts.filter((put) => put.status === 200).map(partNumberOf).sort((a, b) => a - b)
    expect(accepted).toEqual([1, 2, 3, 4, 5, 6, 7])
    expect(resentFinishedBytes(puts)).toBe(0)
    // The pause cancelled at least one part in flight: sent again, as a whole.
    expect(puts.length).toBeGreaterThan(7)
    expect(proxy.log.some((entry) => entry.step === 'DELETE ?uploadId' && entry.url.includes(key))).toBe(false)
  })

  it('presigned mode: the same, with part URLs from the endpoint', async () => {
    const { endpoint } = await endpointFor({ ...rgw, endpoint: proxy.url })
    const bytes = testBytes(SIZE, 14)
    const { options, holdThenResume } = pauseMidway()
    const done = upload(new File([bytes], 'paused.bin'), { endpoint, strategy: 'presigned', ...options })
    const duringPause = await holdThenResume()
    const result = await done

    expect(duringPause).toEqual([])
    expect(sha256(await readObject(reader, result.bucket, result.key))).toBe(sha256(bytes))
    const puts = partPuts(result.key)
    expect(puts.filter((put) => put.status === 200).map(partNumberOf).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7])
    expect(resentFinishedBytes(puts)).toBe(0)
  })
})
