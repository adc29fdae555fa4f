// Issue 25: presigned uploads from a page to Ceph RGW, in real Chromium, through Updraft's endpoint,
// with and without an STS. Every request to storage is cross-origin, so each PUT waits on a real
// CORS preflight. With an STS, RGW 16.2 refuses the preflight of session-signed URLs
// (403 SignatureDoesNotMatch): the default then signs with the server key, and says so once.
import { HeadObjectCommand } from '@aws-sdk/client-s3'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import type { TestPage } from '../dev/browsers.ts'
import { readObject, sdkClient, sha256 } from '../dev/s3-client.ts'
import { type ServedHandler, serveHandler } from '../dev/serve-handler.ts'
import { storeConfig } from '../dev/stores.ts'
import type * as Engine from '../engine/index.ts'
import { createUploadHandler, type UploadHandlerConfig } from '../server/index.ts'
import { type EnginePage, type EnginePageIn, openEnginePage, openEnginePageIn } from './helpers/engine-page.ts'

const MiB = 1024 * 1024
const rgw = inject('rgw')
const admin = sdkClient(rgw)
let engine: EnginePage
let page: Page
const served: ServedHandler[] = []

beforeAll(async () => {
  engine = await openEnginePage()
  page = engine.page
})
afterAll(async () => {
  await Promise.all(served.map((server) => server.close()))
  await engine?.close()
  admin.destroy()
})

/** The upload API on RGW with `extra`, served on its own port; its warnings are kept. */
async function uploadApiWith(extra: UploadHandlerConfig, origin = engine.origin) {
  const warnings: string[] = []
  const logger = {
    error: (obj: object) => void warnings.push(`error: ${JSON.stringify(obj)}`),
    warn: (_obj: object, msg?: string) => void warnings.push(msg ?? ''),
  }
  const server = await serveHandler(
    createUploadHandler(storeConfig(rgw, { allowedOrigins: [origin], logger, ...extra })),
  )
  served.push(server)
  return { api: server.api, warnings }
}

interface PageOutcome {
  key?: string
  sha256: string
  /** The X-Amz-Credential of every URL the page sent to storage: which key signed. */
  credentials: string[]
  /** The object keys those URLs name (path-style: after the bucket). */
  keys: string[]
  error?: { name: string; message: string }
}

/** Uploads `size` bytes made from `seed` with `upload(file, { strategy: 'presigned' })`, in the page (Chromium's unless another is given). */
const uploadInPage = (api: string, size: number, seed: number, inPage: Pick<TestPage, 'evaluate'> = page) =>
  inPage.evaluate(
    async ({ api, size, seed }: { api: string; size: number; seed: number }): Promise<PageOutcome> => {
      const { updraft } = window as unknown as { updraft: typeof Engine }
      const bytes = Uint8Array.from({ length: size }, (_, i) => (i * 31 + seed) % 251)
      const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes))
      const outcome: PageOutcome = {
        sha256: Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join(''),
        credentials: [],
        keys: [],
      }
      const { open } = XMLHttpRequest.prototype
      XMLHttpRequest.prototype.open = function (this: XMLHttpRequest, method: string, url: string | URL) {
        const parsed = new URL(url, location.href)
        const credential = parsed.searchParams.get('X-Amz-Credential')
        if (credential) {
          outcome.credentials.push(credential)
          outcome.keys.push(decodeURIComponent(parsed.pathname.split('/').slice(2).join('/')))
        }
        return open.call(this, method, url, true)
      }
      try {
        const file = new File([bytes], 'data.bin', { type: 'application/octet-stream' })
        outcome.key = (await updraft.upload(file, { api, strategy: 'presigned', retry: { limit: 0 } })).key
      } catch (error) {
        outcome.error = { name: (error as Error).name, message: (error as Error).message }
      } finally {
        XMLHttpRequest.prototype.open = open
      }
      return outcome
    },
    { api, size, seed },
  )

const bytesOf = (size: number, seed: number) => Uint8Array.from({ length: size }, (_, i) => (i * 31 + seed) % 251)
const signedByServerKey = (outcome: PageOutcome) =>
  outcome.credentials.every((credential) => credential.startsWith(`${rgw.credentials.accessKeyId}/`))

const SIZES = [
  ['a 1 MiB single PUT', MiB + 3],
  ['a 12 MiB multipart upload', 12 * MiB + 5],
] as const

describe.each([
  ['without an STS (server key)', {}],
  [
    "with an STS (sts: { mode: 'assume-role', roleArn }), presignWith left to its default",
    { sts: { mode: 'assume-role' as const, roleArn: rgw.roleArn } },
  ],
  [
    "with an STS and presignWith: 'server-key'",
    { sts: { mode: 'assume-role' as const, roleArn: rgw.roleArn }, presignWith: 'server-key' as const },
  ],
])('in Chromium, presigned, to Ceph RGW %s', (_label, extra) => {
  it.each(SIZES)('uploads %s; the object read back is the same bytes', async (_what, size) => {
    const { api, warnings } = await uploadApiWith(extra)
    const seed = size % 97
    const outcome = await uploadInPage(api, size, seed)
    expect(outcome.error).toBeUndefined()
    expect(outcome.credentials.length).toBeGreaterThan(0)
    expect(signedByServerKey(outcome)).toBe(true)
    const stored = await readObject(admin, rgw.bucket, outcome.key!)
    expect(stored.length).toBe(size)
    expect(sha256(stored)).toBe(sha256(bytesOf(size, seed)))
    expect(sha256(stored)).toBe(outcome.sha256)
    if ('sts' in extra && !('presignWith' in extra)) {
      // Said once, with why and what the key must be.
      expect(warnings).toEqual([
        expect.stringMatching(
          /signed with the server's own key: storage answered the browser's CORS preflight for a URL signed by the STS session with 403 SignatureDoesNotMatch/,
        ),
      ])
    }
  })
})

describe("in Chromium, to Ceph RGW with an STS and presignWith: 'session' (kept on purpose)", () => {
  it.each(SIZES)(
    '%s fails with NetworkError: RGW refuses the preflight, and the browser never sends the PUT',
    async (_what, size) => {
      const { api } = await uploadApiWith({
        sts: { mode: 'assume-role', roleArn: rgw.roleArn },
        presignWith: 'session',
      })
      const outcome = await uploadInPage(api, size, 5)
      expect(outcome.error).toMatchObject({ name: 'NetworkError' })
      // Signed by the session, not the server key.
      expect(outcome.credentials.length).toBeGreaterThan(0)
      expect(outcome.credentials.some((credential) => credential.startsWith(`${rgw.credentials.accessKeyId}/`))).toBe(
        false,
      )
      // Nothing was stored under the key the page was given.
      const key = outcome.keys[0]!
      expect(key).toMatch(/^next-s3-uploads\//)
      await expect(admin.send(new HeadObjectCommand({ Bucket: rgw.bucket, Key: key }))).rejects.toMatchObject({
        name: 'NotFound',
      })
    },
  )
})

// Firefox ESR too: its preflight asks for every header the URL signs, the copy guard's
// `x-amz-copy-source-range` included (server/copy-guard.ts), and RGW's CORS rule must allow them.
describe('in Firefox ESR, presigned, to Ceph RGW with an STS, presignWith left to its default', () => {
  let firefox: EnginePageIn
  beforeAll(async () => {
    firefox = await openEnginePageIn('firefox')
  })
  afterAll(() => firefox?.close())

  it.each(SIZES)('uploads %s; the object read back is the same bytes', async (_what, size) => {
    const { api } = await uploadApiWith({ sts: { mode: 'assume-role', roleArn: rgw.roleArn } }, firefox.origin)
    const outcome = await uploadInPage(api, size, 11, firefox.page)
    expect(outcome.error).toBeUndefined()
    expect(signedByServerKey(outcome)).toBe(true)
    const stored = await readObject(admin, rgw.bucket, outcome.key!)
    expect(sha256(stored)).toBe(sha256(bytesOf(size, 11)))
    expect(sha256(stored)).toBe(outcome.sha256)
  })
})
