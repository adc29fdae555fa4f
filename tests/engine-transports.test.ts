// The two Node transports end to end on s3rver: node:http (Node's default, through the "node"
// condition of `#default-transport`) and fetch (workers' default, and the choice of anyone who
// passes it). The browser's XHR transport is covered in tests/engine-browser.test.ts.
import { createServer } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { defaultTransport } from '#default-transport'
import { readObject, sdkClient, sha256, testBytes } from '../dev/s3-client.ts'
import { type S3rverInstance, startS3rver } from '../dev/s3rver.ts'
import { directTarget } from '../dev/stores.ts'
import { fetchTransport, NetworkError, type Transport, uploadObject } from '../engine/index.ts'
import { nodeTransport } from '../engine/transport/node-transport.ts'
import { MIN_PART_SIZE } from '../protocol/limits.ts'

let s3rver: S3rverInstance
beforeAll(async () => {
  s3rver = await startS3rver()
})
afterAll(() => s3rver?.stop())

const target = (transport: Transport, key: string) => directTarget(s3rver, key, { transport })

it('Node picks node:http by default', () => {
  expect(defaultTransport()).toBe(nodeTransport)
})

describe.each([
  ['node:http', nodeTransport],
  ['fetch', fetchTransport],
])('%s transport', (_name, transport) => {
  it('uploads a multipart body byte-exact, with progress ending at the size', async () => {
    const bytes = testBytes(2 * MIN_PART_SIZE + 777, 11)
    const key = `transports/${_name}/${crypto.randomUUID()}.bin`
    const progress: number[] = []
    await uploadObject(new Blob([bytes]), {
      ...target(transport, key),
      onProgress: ({ loaded }) => progress.push(loaded),
    })
    expect(sha256(await readObject(sdkClient(s3rver), s3rver.bucket, key))).toBe(sha256(bytes))
    expect(progress.at(-1)).toBe(bytes.length)
    expect(progress).toEqual([...progress].sort((a, b) => a - b))
  })

  it('rejects with AbortError "Upload aborted" when the signal fires mid-request', async () => {
    const controller = new AbortController()
    // 15 MiB takes s3rver well over 5 ms to take in, so the abort lands mid-transfer.
    const upload = uploadObject(new Blob([testBytes(3 * MIN_PART_SIZE)]), {
      ...target(transport, `transports/aborted-${crypto.randomUUID()}`),
      signal: controller.signal,
    })
    setTimeout(() => controller.abort(), 5)
    await expect(upload).rejects.toMatchObject({ name: 'AbortError', message: 'Upload aborted' })
  })

  it('turns a refused connection into a NetworkError naming the origin only, after its retries', async () => {
    const port = await closedPort()
    const error = await uploadObject(new Blob(['x']), {
      ...target(transport, 'k'),
      endpoint: `http://127.0.0.1:${port}`,
      retry: { limit: 0 },
    }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(NetworkError)
    expect((error as Error).message).toBe(`Network error on PUT http://127.0.0.1:${port}`)
  })
})

/** A loopback port nothing listens on: bound once, then released. */
async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}
