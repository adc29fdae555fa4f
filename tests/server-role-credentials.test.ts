// The upload API on role credentials, as production runs it on AWS (Lambda, ECS, EKS): no key in
// its config; the AWS SDK's default chain finds credentials at the container-credentials endpoint.
// That upload API is a stand-in, but what it serves is real: credentials RGW's STS issued for a role.
// Through them the upload API issues token credentials (AssumeRole again, chained), signs presigned
// URLs and checks uploads at /complete, across a rotation of its own credentials.

import type { S3Client } from '@aws-sdk/client-s3'
import { AssumeRoleCommand, STSClient } from '@aws-sdk/client-sts'
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest'
import { readObject, sdkClient, sha256, testBytes } from '../dev/s3-client.ts'
import { type ServedHandler, serveHandler } from '../dev/serve-handler.ts'
import { PauseController, upload } from '../engine/index.ts'
import { createUploadHandler } from '../server/index.ts'
import {
  type ContainerCredentials,
  type CredentialsEndpoint,
  startCredentialsEndpoint,
} from './helpers/container-credentials.ts'

const MiB = 1024 * 1024
const rgw = inject('rgw')
/** The SDK renews credentials once they have less than five minutes left. */
const SDK_RENEWAL_WINDOW_MS = 5 * 60_000
/** Each document says it expires this long after the renewal window opens: the next request renews. */
const LIFE_PAST_WINDOW_MS = 3_000

let credentialsEndpoint: CredentialsEndpoint
let admin: S3Client
const served: ServedHandler[] = []
const warnings: string[] = []
const errors: object[] = []

beforeAll(async () => {
  const sts = new STSClient({ region: rgw.region, endpoint: rgw.endpoint, credentials: rgw.credentials })
  // What a container runtime does: assume the task's role, hand the credentials out over HTTP.
  credentialsEndpoint = await startCredentialsEndpoint(async () => {
    const { Credentials: c } = await sts.send(
      new AssumeRoleCommand({ RoleArn: rgw.roleArn, RoleSessionName: 'container-task', DurationSeconds: 900 }),
    )
    return {
      AccessKeyId: c!.AccessKeyId!,
      SecretAccessKey: c!.SecretAccessKey!,
      Token: c!.SessionToken!,
      Expiration: new Date(Date.now() + SDK_RENEWAL_WINDOW_MS + LIFE_PAST_WINDOW_MS).toISOString(),
    } satisfies ContainerCredentials
  })
  vi.stubEnv('AWS_CONTAINER_CREDENTIALS_FULL_URI', credentialsEndpoint.url)
  vi.stubEnv('AWS_EC2_METADATA_DISABLED', 'true')
  for (const name of [
    'AWS_ACCESS_KEY_ID',
    'AWS_SECRET_ACCESS_KEY',
    'AWS_SESSION_TOKEN',
    'AWS_PROFILE',
    'S3_UPLOAD_KEY',
    'S3_UPLOAD_SECRET',
  ])
    vi.stubEnv(name, '')
  admin = sdkClient(rgw)
})
afterAll(async () => {
  for (const server of served) await server.close()
  await credentialsEndpoint?.stop()
  admin?.destroy()
  vi.unstubAllEnvs()
})

/** An upload API with no key configured: the chain finds the container's. */
async function uploadApiWithoutKeys(extra: Record<string, unknown> = {}) {
  const handler = createUploadHandler({
    bucket: rgw.bucket,
    region: rgw.region,
    endpoint: rgw.endpoint,
    forcePathStyle: true,
    ticketSecret: 'shared by every instance, not derived from a key that rotates',
    sts: { mode: 'assume-role', roleArn: rgw.roleArn },
    logger: { error: (obj) => void errors.push(obj), warn: (_obj, message) => void warnings.push(message ?? '') },
    ...extra,
  })
  const server = await serveHandler(handler)
  served.push(server)
  return server
}

async function uploadAndReadBack(
  api: string,
  strategy: 'token' | 'presigned',
  size: number,
  seed: number,
  options: Parameters<typeof upload>[1] = {},
) {
  const bytes = testBytes(size, seed)
  const result = await upload(new Blob([bytes]), { api, strategy, retry: { limit: 0 }, ...options })
  expect(sha256(await readObject(admin, result.bucket, result.key))).toBe(sha256(bytes))
  return result
}

describe('an upload API with no key, on role credentials from a container-credentials endpoint', () => {
  it('refuses to start without a ticketSecret, which rotating credentials cannot give', () => {
    expect(() =>
      createUploadHandler({ bucket: rgw.bucket, region: rgw.region, endpoint: rgw.endpoint, forcePathStyle: true }),
    ).toThrow(
      "updraft: missing settings: a static key (S3_UPLOAD_KEY and S3_UPLOAD_SECRET) or, with credentials from the AWS SDK's chain, ticketSecret (S3_UPLOAD_TICKET_SECRET)",
    )
  })

  it.each([
    ['token', 1 * MiB],
    ['token', 12 * MiB],
    ['presigned', 1 * MiB],
    ['presigned', 12 * MiB],
  ] as const)('%s mode, %i bytes: lands byte-exact on RGW', async (strategy, size) => {
    const { api } = await uploadApiWithoutKeys()
    await uploadAndReadBack(api, strategy, size, size + strategy.length)
    expect(credentialsEndpoint.served.length).toBeGreaterThan(0)
    expect(errors).toEqual([])
  })

  it('keeps working across a rotation of its own credentials, in the middle of an upload', async () => {
    const { api } = await uploadApiWithoutKeys({ presignWith: 'server-key' })
    for (const strategy of ['presigned', 'token'] as const) {
      const before = new Set(credentialsEndpoint.served.map(({ AccessKeyId }) => AccessKeyId))
      // Paused after its first part: the rest of the upload (part URLs, Complete, /complete) runs
      // on credentials the upload API has renewed since it issued the upload.
      const pause = new PauseController()
      let paused = false
      const uploading = uploadAndReadBack(api, strategy, 12 * MiB, 77, {
        partSize: 5 * MiB,
        partConcurrency: 1,
        pauseSignal: pause.signal,
        onProgress: ({ loaded }) => {
          if (!paused && loaded >= 5 * MiB) {
            paused = true
            pause.pause()
          }
        },
      })
      await vi.waitFor(() => expect(paused).toBe(true), { timeout: 30_000 })
      await new Promise((resolve) => setTimeout(resolve, LIFE_PAST_WINDOW_MS + 500))
      pause.resume()
      await uploading
      const after = credentialsEndpoint.served.map(({ AccessKeyId }) => AccessKeyId).filter((id) => !before.has(id))
      expect(after.length, `${strategy}: the upload API renewed its credentials during the upload`).toBeGreaterThan(0)
    }
    expect(errors).toEqual([])
  })

  it('signs presigned URLs with its own credentials for no longer than they live', async () => {
    const { api } = await uploadApiWithoutKeys({ presignWith: 'server-key' })
    const response = await fetch(api, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        filename: 'a.bin',
        filetype: 'application/octet-stream',
        filesize: 10,
        strategy: 'presigned',
      }),
    })
    expect(response.status).toBe(200)
    const { url } = (await response.json()) as { url: string }
    const expires = Number(new URL(url).searchParams.get('X-Amz-Expires'))
    const lastServed = credentialsEndpoint.served.at(-1)!
    const left = (Date.parse(lastServed.Expiration) - Date.now()) / 1000
    expect(new URL(url).searchParams.get('X-Amz-Security-Token')).toBe(lastServed.Token)
    expect(expires).toBeGreaterThan(0)
    expect(expires).toBeLessThanOrEqual(Math.ceil(left) + 1)
  })
})
