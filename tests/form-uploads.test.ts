// S3 POST forms (`formUploads`, issue 34): a file of one request goes as a POST form to the
// bucket's one URL, so a browser needs one CORS preflight for the page rather than one per file.
// The policy binds what a PUT URL binds; these tests play the page that lies about it, on every
// store the tests run: Ceph RGW refuses every lie (the server hands out forms there), s3rver
// stores every one and Swift's S3 API has no POST Object (the server checks that once and hands
// out PUT URLs there). Every stored object is read back and compared.
import { HeadObjectCommand } from '@aws-sdk/client-s3'
import { AwsClient } from 'aws4fetch'
import { afterEach, describe, expect, inject, it, vi } from 'vitest'
import { startHangProxy } from '../dev/hang-proxy.ts'
import { objectExists, readObject, sha256, testBytes, testBytesOf } from '../dev/s3-client.ts'
import type { TestStore } from '../dev/stores.ts'
import { S3Error, upload } from '../engine/index.ts'
import { checksum } from '../engine/opt-ins/checksums/index.ts'
import { nodeTransport } from '../engine/transport/node-transport.ts'
import type {
  BatchError,
  PresignedForm,
  PresignedFormReply,
  PresignedPutReply,
  UploadResult,
} from '../protocol/wire.ts'
import { FORM_LIES, postForm } from '../server/form-check.ts'
import type { UploadHandlerConfig } from '../server/index.ts'
import { uploadApiFixture } from './helpers/upload-api-fixture.ts'

const { stores, uploadApiFor } = uploadApiFixture()
const rgw = () => inject('rgw')
const swift = () => inject('swift')

async function post<T>(api: string, route: string, body: unknown): Promise<T> {
  const response = await fetch(api + route, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  const json = (await response.json()) as T
  expect(response.status, JSON.stringify(json)).toBe(200)
  return json
}

const request = (name: string, bytes: Uint8Array, extra: object = {}) => ({
  filename: name,
  filetype: 'image/png',
  filesize: bytes.byteLength,
  strategy: 'presigned',
  form: true,
  ...extra,
})

/** Posts `form` as `fields` say (the policy's own by default), `body` as the file: storage's status and error code. */
async function send(form: PresignedForm, body: Uint8Array<ArrayBuffer>, fields = form.fields) {
  const response = await postForm(form, body, fields)
  const text = await response.text()
  return { status: response.status, code: /<Code>([^<]+)<\/Code>/.exec(text)?.[1] }
}

function warnings() {
  const warned: string[] = []
  const logger = { error: () => {}, warn: (_: object, message?: string) => void warned.push(message ?? '') }
  return { warned, logger }
}

describe('on Ceph RGW, which enforces POST policies, formUploads hands out forms', () => {
  const config: UploadHandlerConfig = { formUploads: true }

  it('one file: a form, not a PUT URL; storage stores it, /complete verifies it, it reads back byte-exact', async () => {
    const store = rgw()
    const { api, client } = await uploadApiFor(store, config)
    const bytes = testBytesOf('image/png', 20_000, 7)
    const reply = await post<PresignedFormReply & { url?: string }>(api, '', request('photo.png', bytes))
    expect(reply.url).toBeUndefined()
    // The bucket's one URL: the same for every file, so a browser's preflight cache holds one entry.
    expect(reply.form.url).toBe(`${store.endpoint}/${store.bucket}`)
    expect(reply.form.fields).toMatchObject({ key: reply.key, 'Content-Type': 'image/png' })
    expect(await send(reply.form, bytes)).toEqual({ status: 204, code: undefined })
    const done = await post<UploadResult>(api, '/complete', { ticket: reply.ticket })
    expect(done.key).toBe(reply.key)
    expect(sha256(await readObject(client, store.bucket, reply.key))).toBe(sha256(bytes))
    const head = await client.send(new HeadObjectCommand({ Bucket: store.bucket, Key: reply.key }))
    expect(head.ContentType).toBe('image/png')
  })

  it('a batch: a form per file, each with its own key; all stored, all verified in one /batch/complete, each byte-exact', async () => {
    const store = rgw()
    const { api, client } = await uploadApiFor(store, config)
    const files = [11, 12, 13].map((seed) => testBytesOf('image/png', 8_000 + seed * 100, seed))
    const { files: replies } = await post<{ files: PresignedFormReply[] }>(api, '/batch', {
      files: files.map((bytes, index) => request(`p${index}.png`, bytes)),
    })
    expect(new Set(replies.map((reply) => reply.key)).size).toBe(3)
    expect(new Set(replies.map((reply) => reply.form.url)).size).toBe(1)
    for (const [index, reply] of replies.entries()) expect((await send(reply.form, files[index]!)).status).toBe(204)
    const { files: done } = await post<{ files: Array<UploadResult | BatchError> }>(api, '/batch/complete', {
      files: replies.map((reply) => ({ ticket: reply.ticket })),
    })
    expect(done.map((entry) => ('error' in entry ? entry.error : entry.key))).toEqual(replies.map((reply) => reply.key))
    for (const [index, reply] of replies.entries())
      expect(sha256(await readObject(client, store.bucket, reply.key))).toBe(sha256(files[index]!))
  })

  describe('a page that changes the form is refused by storage, and nothing is stored', () => {
    const size = 5_000
    const bytes = testBytesOf('image/png', size, 21)
    const lies: Array<[string, (form: PresignedForm) => Record<string, string>, Uint8Array<ArrayBuffer>?]> = [
      ['acl=public-read added', (form) => ({ ...form.fields, acl: 'public-read' })],
      ['x-amz-meta-x added', (form) => ({ ...form.fields, 'x-amz-meta-x': 'y' })],
      ['success_action_redirect added', (form) => ({ ...form.fields, success_action_redirect: 'https://evil.test/' })],
      [
        'x-amz-website-redirect-location added',
        (form) => ({ ...form.fields, 'x-amz-website-redirect-location': '/x' }),
      ],
      ['Content-Disposition added', (form) => ({ ...form.fields, 'Content-Disposition': 'inline' })],
      ['a second Cache-Control', (form) => ({ ...form.fields, 'cache-control': 'no-store' })],
      ['another Content-Type (text/html)', (form) => ({ ...form.fields, 'Content-Type': 'text/html' })],
      ['one byte more', (form) => form.fields, testBytes(size + 1, 21)],
      ['one byte less', (form) => form.fields, testBytes(size - 1, 21)],
    ]
    for (const [lie, fields, body] of lies) {
      it(lie, async () => {
        const store = rgw()
        const { api, client } = await uploadApiFor(store, config)
        const reply = await post<PresignedFormReply>(api, '', request('lie.png', bytes))
        const refused = await send(reply.form, body ?? bytes, fields(reply.form))
        expect(refused.status, refused.code).toBeGreaterThanOrEqual(400)
        expect(refused.status).toBeLessThan(500)
        expect(await objectExists(client, store.bucket, reply.key)).toBe(false)
      })
    }

    it('a second key field (the key of another file of the batch): refused, neither key stored', async () => {
      const store = rgw()
      const { api, client } = await uploadApiFor(store, config)
      const { files } = await post<{ files: PresignedFormReply[] }>(api, '/batch', {
        files: [request('a.png', bytes), request('b.png', bytes)],
      })
      const [a, b] = files as [PresignedFormReply, PresignedFormReply]
      // B's key in A's form, in its place, then beside A's own.
      expect((await send(a.form, bytes, { ...a.form.fields, key: b.key })).status).toBe(403)
      const twice = new FormData()
      for (const [name, value] of Object.entries(a.form.fields)) twice.append(name, value)
      twice.append('key', b.key)
      twice.append('file', new Blob([bytes]))
      const response = await fetch(a.form.url, { method: 'POST', body: twice })
      await response.body?.cancel()
      expect(response.status).toBeGreaterThanOrEqual(400)
      expect(await objectExists(client, store.bucket, a.key)).toBe(false)
      expect(await objectExists(client, store.bucket, b.key)).toBe(false)
    })

    describe('replayed after it expired', () => {
      afterEach(() => vi.useRealTimers())
      it('a form signed an hour and a minute ago (it lives an hour, as a PUT URL): refused, nothing stored', async () => {
        const store = rgw()
        const { api, client } = await uploadApiFor(store, config)
        // The check that storage enforces policies runs now, with the right time.
        await post<PresignedFormReply>(api, '', request('warm.png', bytes))
        vi.useFakeTimers({ toFake: ['Date'], now: Date.now() - 61 * 60 * 1000 })
        const reply = await post<PresignedFormReply>(api, '', request('old.png', bytes))
        vi.useRealTimers()
        const refused = await send(reply.form, bytes)
        expect(refused.status).toBe(403)
        expect(await objectExists(client, store.bucket, reply.key)).toBe(false)
      })
    })
  })

  it('a file over multipartThreshold gets a multipart upload, and a page that did not ask (no form) a PUT URL', async () => {
    const store = rgw()
    const { api } = await uploadApiFor(store, { ...config, multipartThreshold: 10_000 })
    const small = await post<PresignedPutReply>(api, '', { ...request('a.png', new Uint8Array(100)), form: undefined })
    expect(small.url).toContain('X-Amz-Signature')
    const large = await post<{ uploadId?: string; form?: unknown }>(api, '', request('b.png', new Uint8Array(20_000)))
    expect(large.uploadId).toBeDefined()
    expect(large.form).toBeUndefined()
  })

  it('formUploads off (the default): a page asking for a form gets a PUT URL', async () => {
    const { api } = await uploadApiFor(rgw())
    const reply = await post<PresignedPutReply & { form?: unknown }>(api, '', request('a.png', new Uint8Array(100)))
    expect(reply.form).toBeUndefined()
    expect(reply.url).toContain('X-Amz-Signature')
  })
})

describe('stores that do not enforce POST policies get PUT URLs, checked once and said once', () => {
  const cases: Array<[string, () => TestStore, RegExp]> = [
    // s3rver 4.0.3 checks no condition of a policy: it stores every lie of FORM_LIES.
    [
      's3rver (stores forms that break their policy)',
      stores.s3rver,
      /does not enforce POST policies \(it stored a form with/,
    ],
    // Swift 2.30's s3api answers 412 "Bad URL" to any POST Object.
    ['Swift (no POST Object)', swift, /did not store an honest POST form/],
  ]
  for (const [name, store, warning] of cases) {
    it(name, async () => {
      const { warned, logger } = warnings()
      const { api, client } = await uploadApiFor(store(), { formUploads: true, logger })
      const bytes = testBytesOf('image/png', 3_000, 31)
      const replies = await Promise.all(
        [0, 1, 2].map(() => post<PresignedPutReply & { form?: unknown }>(api, '', request('a.png', bytes))),
      )
      await post<PresignedPutReply>(api, '', request('b.png', bytes))
      for (const reply of replies) {
        expect(reply.form).toBeUndefined()
        expect((await fetch(reply.url, { method: 'PUT', body: bytes, headers: reply.headers })).status).toBe(200)
        await post<UploadResult>(api, '/complete', { ticket: reply.ticket })
        expect(sha256(await readObject(client, store().bucket, reply.key))).toBe(sha256(bytes))
      }
      expect(warned.filter((message) => warning.test(message))).toHaveLength(1)
      // What the check's forms stored is gone (listed through aws4fetch: s3rver refuses the SDK's list signatures).
      const listing = await new AwsClient({ ...store().credentials, service: 's3', region: store().region }).fetch(
        `${store().endpoint}/${store().bucket}?prefix=next-s3-uploads/updraft-form-check/`,
      )
      expect(listing.status).toBe(200)
      expect(await listing.text()).not.toContain('<Key>')
    })
  }

  it("on RGW with contentDisposition 'attachment': RGW keeps no Content-Disposition from a form, so PUT URLs", async () => {
    const { warned, logger } = warnings()
    const { api, client } = await uploadApiFor(rgw(), { formUploads: true, contentDisposition: 'attachment', logger })
    const bytes = testBytesOf('image/png', 3_000, 32)
    const reply = await post<PresignedPutReply & { form?: unknown }>(api, '', request('a.png', bytes))
    expect(reply.form).toBeUndefined()
    expect((await fetch(reply.url, { method: 'PUT', body: bytes, headers: reply.headers })).status).toBe(200)
    await post<UploadResult>(api, '/complete', { ticket: reply.ticket })
    const head = await client.send(new HeadObjectCommand({ Bucket: rgw().bucket, Key: reply.key }))
    expect(head.ContentDisposition).toBe('attachment')
    expect(
      warned.filter((message) => /does not keep the Content-Disposition a POST form sets/.test(message)),
    ).toHaveLength(1)
  })

  it('on RGW: forms go, and the deployer hears once that RGW keeps no Cache-Control from them', async () => {
    const { warned, logger } = warnings()
    const { api } = await uploadApiFor(rgw(), { formUploads: true, logger })
    for (const name of ['a.png', 'b.png']) {
      const reply = await post<PresignedFormReply>(api, '', request(name, new Uint8Array(10)))
      expect(reply.form).toBeDefined()
    }
    expect(warned.filter((message) => message.includes('keeps no Cache-Control from a POST form'))).toHaveLength(1)
  })

  it('storage that stops answering during the check: the request gets a PUT URL within timeouts.storage, and the next request checks again', async () => {
    const proxy = await startHangProxy(rgw().endpoint)
    try {
      const { warned, logger } = warnings()
      const store = { ...rgw(), endpoint: proxy.origin }
      const { api } = await uploadApiFor(store, { formUploads: true, timeouts: { storage: 500 }, logger })
      // The storage check passes while storage answers (a page that asks no form).
      await post(api, '', { ...request('a.png', new Uint8Array(10)), form: undefined })
      proxy.hanging = true
      const held = await post<PresignedPutReply & { form?: unknown }>(api, '', request('b.png', new Uint8Array(10)))
      expect(held.form).toBeUndefined()
      expect(held.url).toContain('X-Amz-Signature')
      expect(proxy.held).toBeGreaterThan(0)
      expect(warned.some((message) => message.includes('could not check whether storage enforces POST policies'))).toBe(
        true,
      )
      proxy.hanging = false
      const checked = await post<PresignedFormReply>(api, '', request('c.png', new Uint8Array(10)))
      expect(checked.form.url).toBe(`${proxy.origin}/${store.bucket}`)
    } finally {
      await proxy.stop()
    }
  })

  it('the check names each lie s3rver took (all of them)', async () => {
    const { warned, logger } = warnings()
    const { api } = await uploadApiFor(stores.s3rver(), { formUploads: true, logger })
    await post(api, '', request('a.png', new Uint8Array(10)))
    for (const lie of FORM_LIES) expect(warned.join('\n')).toContain(lie.what)
  })
})

describe('the engine sends the form it is given, and a PUT where it is given a URL', () => {
  const transports = [
    ['the default transport (fetch in Node)', undefined],
    ['nodeTransport', nodeTransport],
  ] as const
  for (const [name, transport] of transports) {
    it(`on RGW, ${name}: upload() asks for a form, POSTs it, counts the file's bytes only, reads back byte-exact`, async () => {
      const store = rgw()
      const { api, client, calls } = await uploadApiFor(store, { formUploads: true })
      const bytes = testBytesOf('image/png', 300_000, 51)
      const loaded: number[] = []
      const result = await upload(new Blob([bytes], { type: 'image/png' }), {
        api,
        strategy: 'presigned',
        filename: 'photo.png',
        ...(transport && { transport }),
        onProgress: ({ loaded: bytesSent }) => void loaded.push(bytesSent),
      })
      const [asked, completed] = calls
      expect(asked?.body.form).toBe(true)
      expect((asked!.reply as PresignedFormReply).form.url).toBe(`${store.endpoint}/${store.bucket}`)
      expect(completed?.route).toBe('/complete')
      expect(result.url).toBe(`${store.endpoint}/${store.bucket}/${result.key}`)
      expect(loaded.at(-1)).toBe(bytes.byteLength)
      expect(Math.max(...loaded)).toBe(bytes.byteLength)
      expect(sha256(await readObject(client, store.bucket, result.key))).toBe(sha256(bytes))
    })
  }

  it('on s3rver (no policy enforced): the same upload() gets a PUT URL and PUTs it', async () => {
    const store = stores.s3rver()
    const { warned, logger } = warnings()
    const { api, client, calls } = await uploadApiFor(store, { formUploads: true, logger })
    const bytes = testBytesOf('image/png', 20_000, 52)
    const result = await upload(new Blob([bytes], { type: 'image/png' }), { api, strategy: 'presigned' })
    expect(calls[0]?.body.form).toBe(true)
    expect((calls[0]!.reply as PresignedPutReply).url).toContain('X-Amz-Signature')
    expect(warned.filter((message) => message.includes('POST policies'))).toHaveLength(1)
    expect(sha256(await readObject(client, store.bucket, result.key))).toBe(sha256(bytes))
  })

  it('with checksum(): no form is asked for (a form carries no Content-MD5), and the PUT carries it', async () => {
    const store = rgw()
    const { api, client, calls } = await uploadApiFor(store, { formUploads: true })
    const bytes = testBytesOf('image/png', 20_000, 53)
    const result = await upload(new Blob([bytes], { type: 'image/png' }), {
      api,
      strategy: 'presigned',
      ...checksum('md5'),
    })
    expect(calls[0]?.body.form).toBeUndefined()
    expect((calls[0]!.reply as PresignedPutReply).url).toContain('X-Amz-Signature')
    expect(sha256(await readObject(client, store.bucket, result.key))).toBe(sha256(bytes))
  })

  it('a form storage refuses (expired) fails the upload as a refused PUT URL does: S3Error, once, no retry', async () => {
    const store = rgw()
    const { api, calls } = await uploadApiFor(store, { formUploads: true })
    await post(api, '', request('warm.png', new Uint8Array(10)))
    const bytes = testBytesOf('image/png', 5_000, 54)
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() - 61 * 60 * 1000 })
    const asking = upload(new Blob([bytes], { type: 'image/png' }), { api, strategy: 'presigned' }).catch(
      (caught: unknown) => caught,
    )
    // The reply is signed in the past; storage sees the form now.
    await vi.waitFor(() => expect(calls).toHaveLength(2))
    vi.useRealTimers()
    const error = await asking
    expect(error).toBeInstanceOf(S3Error)
    expect((error as S3Error).status).toBe(403)
    expect(calls.map((call) => call.route)).toEqual(['', ''])
  })
})
