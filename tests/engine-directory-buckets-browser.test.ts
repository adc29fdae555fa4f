// Directory buckets in real Chromium: the page's bundle of the engine and updraft-s3/aws-endpoints
// calls CreateSession and sends every part over cross-origin XHR with `x-amz-s3session-token`
// (through the CORS preflight), in front of Ceph RGW through the S3 Express stand-in
// (tests/helpers/s3express-server.ts); the object reads back byte-exact.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { readObject, sdkClient, sha256 } from '../dev/s3-client.ts'
import type * as Engine from '../engine/index.ts'
import type * as AwsEndpoints from '../engine/opt-ins/aws-endpoints.ts'
import { bundleForBrowser } from './helpers/engine-bundle.ts'
import { type EnginePage, openEnginePage } from './helpers/engine-page.ts'
import { type S3ExpressStandIn, startS3ExpressStandIn } from './helpers/s3express-server.ts'

const rgw = inject('rgw')
const BUCKET = 'browser--test1-az1--x-s3'
const BASE = { accessKeyId: 'PAGEKEY', secretAccessKey: 'PAGESECRET', sessionToken: 'page-sts-token' }
let engine: EnginePage
let express: S3ExpressStandIn

beforeAll(async () => {
  engine = await openEnginePage(
    bundleForBrowser({
      contents: `export * from './engine/index.ts'; export { awsEndpoints } from './engine/opt-ins/aws-endpoints.ts'`,
    }),
  )
  express = await startS3ExpressStandIn({ store: rgw, buckets: { [BUCKET]: rgw.bucket }, callers: [BASE] })
})
afterAll(async () => {
  await engine?.close()
  await express?.stop()
})

interface Job {
  target: { endpoint: string; region: string; bucket: string; key: string; credentials: Engine.Credentials }
  size: number
}

const uploadInPage = (job: Job) =>
  engine.page.evaluate(async ({ target, size }: Job) => {
    const { updraft } = window as unknown as { updraft: typeof Engine & typeof AwsEndpoints }
    const bytes = new Uint8Array(size)
    for (let i = 0; i < size; i += 65536) crypto.getRandomValues(bytes.subarray(i, i + 65536))
    const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes))
    const tokens: string[] = []
    const { setRequestHeader } = XMLHttpRequest.prototype
    XMLHttpRequest.prototype.setRequestHeader = function (this: XMLHttpRequest, name: string, value: string) {
      if (name === 'x-amz-s3session-token') tokens.push(value)
      return setRequestHeader.call(this, name, value)
    }
    try {
      await updraft.uploadObject(new Blob([bytes]), { ...target, ...updraft.awsEndpoints() })
      return { sha256: Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join(''), tokens }
    } catch (error) {
      return { error: `${(error as Error).name}: ${(error as Error).message}`, tokens }
    } finally {
      XMLHttpRequest.prototype.setRequestHeader = setRequestHeader
    }
  }, job)

describe('a directory bucket in Chromium, cross-origin, in front of Ceph RGW', () => {
  it('multipart (11 MiB, 5 MiB parts) over XHR with one session, read back byte-exact', async () => {
    const key = `browser-express/${randomUUID()}.bin`
    const outcome = await uploadInPage({
      target: { endpoint: express.endpoint, region: 'us-east-1', bucket: BUCKET, key, credentials: BASE },
      size: 11 * 1024 * 1024,
    })
    expect(outcome.error).toBeUndefined()
    // Create, three parts, Complete, and the HEAD that asks for the ETag RGW's Complete reply
    // leaves out: each carried the one session's token.
    expect(outcome.tokens).toHaveLength(6)
    expect(new Set(outcome.tokens).size).toBe(1)
    expect(express.sessions).toEqual([BUCKET])
    expect(sha256(await readObject(sdkClient(rgw), rgw.bucket, key))).toBe(outcome.sha256)
  })
})
