// Issue 10, finding 3: the Web handler processed text/plain, form-encoded, multipart and typeless
// bodies, which a page on any site can make a visitor's browser send without asking (no CORS
// preflight): from another site's page in Chromium the upload API answered 200, and an `authorize`
// trusting the visitor's session cookie let such a request through (CSRF). Now both mountings
// read JSON only (415) and refuse cross-site requests (403) unless the origin is in
// `allowedOrigins`; same-origin pages and servers keep working.
import { connect } from 'node:net'
import Fastify, { type FastifyInstance } from 'fastify'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ChromiumSession, launchChromium } from '../dev/launch-chromium.ts'
import { type S3rverInstance, startS3rver } from '../dev/s3rver.ts'
import { type ServedHandler, serveHandler } from '../dev/serve-handler.ts'
import { storeConfig } from '../dev/stores.ts'
import { s3Upload } from '../server/fastify.ts'
import { createUploadHandler, type UploadHandlerConfig } from '../server/index.ts'
import { type StaticServer, startStaticServer } from './helpers/static-server.ts'

let s3rver: S3rverInstance
let chromium: ChromiumSession
const closers: Array<() => Promise<unknown>> = []

beforeAll(async () => {
  s3rver = await startS3rver()
  chromium = await launchChromium()
})
afterAll(async () => {
  await Promise.all(closers.map((close) => close()))
  await chromium?.close()
  await s3rver?.stop()
})

interface Seen {
  method: string
  contentType: string | null
  cookie: string | null
  status: number
}

const UPLOAD = JSON.stringify({ filename: 'a.txt', filetype: 'text/plain', filesize: 3, strategy: 'presigned' })

/** A page of the upload API's own origin that calls it as the engine does (JSON, cookies sent). */
const OWN_PAGE = `<!doctype html><title>own</title><script>
window.callApi = () => fetch('/api/s3-upload', { method: 'POST', headers: { 'content-type': 'application/json' }, body: ${JSON.stringify(UPLOAD)} }).then((r) => r.status)
</script>`

/**
 * The Web handler on its own origin, with an `authorize` that trusts a session cookie (as apps
 * do), serving OWN_PAGE at /own; every request it answers is recorded.
 */
async function uploadApi(extra: UploadHandlerConfig = {}) {
  const seen: Seen[] = []
  const handler = createUploadHandler(
    storeConfig(s3rver, {
      authorize: (request) => /(^|; )session=victim(;|$)/.test(request.headers.get('cookie') ?? ''),
      logger: { error: () => {}, warn: () => {} },
      ...extra,
    }),
  )
  const served: ServedHandler = await serveHandler(async (request) => {
    if (new URL(request.url).pathname === '/own')
      return new Response(OWN_PAGE, { headers: { 'content-type': 'text/html' } })
    const response = await handler(request)
    seen.push({
      method: request.method,
      contentType: request.headers.get('content-type'),
      cookie: request.headers.get('cookie'),
      status: response.status,
    })
    return response
  })
  closers.push(() => served.close())
  return { ...served, seen }
}

/** The attacker's page: every way a page can send a body without a preflight, plus a JSON one that needs it. */
const ATTACKER_PAGE = `<!doctype html><title>attacker</title><script>
window.attack = async (endpoint) => {
  const body = ${JSON.stringify(UPLOAD)}
  const form = new FormData(); form.append('filename', 'a.txt')
  const sends = [
    { body },                                                   // text/plain
    { body: new URLSearchParams({ filename: 'a.txt' }) },       // form-encoded
    { body: form },                                             // multipart/form-data
    { body: new Blob([body]) },                                 // no type at all
  ].map((init) => fetch(endpoint, { method: 'POST', mode: 'no-cors', credentials: 'include', ...init }).then(() => 'sent', () => 'failed'))
  // JSON needs a preflight, which must not be granted to this origin.
  sends.push(fetch(endpoint, { method: 'POST', credentials: 'include', headers: { 'content-type': 'application/json' }, body }).then((r) => 'read ' + r.status, () => 'blocked'))
  return Promise.all(sends)
}
</script>`

async function attackerSite(): Promise<StaticServer> {
  const site = await startStaticServer({ '/': { body: ATTACKER_PAGE, type: 'text/html; charset=utf-8' } })
  closers.push(() => site.close())
  return site
}

async function visit(url: string, cookieFor?: string): Promise<Page> {
  const page = await chromium.newPage()
  // The victim is signed in to the app: a Lax cookie (the browser default), sent on same-site requests.
  if (cookieFor)
    await page.context().addCookies([{ name: 'session', value: 'victim', url: cookieFor, sameSite: 'Lax' }])
  await page.goto(url)
  return page
}

describe('the Web handler in Chromium', () => {
  it('a same-site page on another port, with the victim signed in, gets nothing processed (was 200, CSRF)', async () => {
    const app = await uploadApi()
    const site = await attackerSite()
    const page = await visit(`${site.origin}/`, app.origin)
    const outcomes = await page.evaluate(
      (url) => (window as unknown as { attack(u: string): Promise<string[]> }).attack(url),
      app.api,
    )
    expect(outcomes.slice(-1)).toEqual(['blocked'])
    // The four preflight-free bodies arrived, with the victim's cookie, and were refused; the JSON one got no further than its preflight.
    const posts = app.seen.filter((request) => request.method === 'POST')
    expect(posts).toHaveLength(4)
    for (const post of posts) expect(post).toMatchObject({ cookie: 'session=victim', status: 403 })
    expect(app.seen.filter((request) => request.method === 'OPTIONS')).toEqual([
      expect.objectContaining({ status: 403 }),
    ])
  })

  it('a cross-site page (localhost against 127.0.0.1) gets 403 for every body (was 200)', async () => {
    const app = await uploadApi({ authorize: undefined })
    const site = await attackerSite()
    const page = await visit(`${site.origin.replace('127.0.0.1', 'localhost')}/`)
    await page.evaluate((url) => (window as unknown as { attack(u: string): Promise<string[]> }).attack(url), app.api)
    const posts = app.seen.filter((request) => request.method === 'POST')
    expect(posts.length).toBe(4)
    expect(posts.map((post) => post.status)).toEqual([403, 403, 403, 403])
  })

  it('the upload API’s own page keeps working: same-origin JSON with the cookie → 200', async () => {
    const app = await uploadApi()
    const page = await visit(`${app.origin}/own`, app.origin)
    expect(await page.evaluate(() => (window as unknown as { callApi(): Promise<number> }).callApi())).toBe(200)
  })

  it('an origin in allowedOrigins gets its preflight granted and its JSON answered, readable', async () => {
    const site = await attackerSite()
    const app = await uploadApi({ allowedOrigins: [site.origin] })
    const page = await visit(`${site.origin}/`, app.origin)
    const outcomes = await page.evaluate(
      (url) => (window as unknown as { attack(u: string): Promise<string[]> }).attack(url),
      app.api,
    )
    expect(outcomes.at(-1)).toBe('read 200')
    // Allowed as an origin, the non-JSON bodies are still refused: the upload API reads JSON only.
    expect(
      app.seen
        .filter((request) => request.method === 'POST')
        .map((post) => post.status)
        .sort(),
    ).toEqual([200, 415, 415, 415, 415])
  })
})

/** One HTTP/1.1 request over a raw socket: headers a browser would never let a page set, exactly as given. */
function rawPost(origin: string, path: string, headers: Record<string, string>, body = UPLOAD): Promise<number> {
  const { hostname, port } = new URL(origin)
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname)
    let reply = ''
    socket.on('data', (chunk) => {
      reply += chunk.toString('latin1')
      const match = /^HTTP\/1\.1 (\d{3})/.exec(reply)
      if (match) {
        socket.destroy()
        resolve(Number(match[1]))
      }
    })
    socket.on('error', reject)
    const lines = [
      `POST ${path} HTTP/1.1`,
      `Host: ${hostname}:${port}`,
      `Content-Length: ${Buffer.byteLength(body)}`,
      'Connection: close',
    ]
    for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`)
    socket.write(`${lines.join('\r\n')}\r\n\r\n${body}`)
  })
}

describe.each(['web', 'fastify'] as const)('the %s mounting over a raw socket', (mounting) => {
  let origin: string
  beforeAll(async () => {
    const config = storeConfig(s3rver, { logger: { error: () => {}, warn: () => {} } })
    if (mounting === 'web') {
      const served = await serveHandler(createUploadHandler(config))
      closers.push(() => served.close())
      origin = served.origin
    } else {
      const app: FastifyInstance = Fastify({ logger: false })
      await app.register(s3Upload, config)
      origin = (await app.listen({ port: 0, host: '127.0.0.1' })).replace('localhost', '127.0.0.1')
      closers.push(() => app.close())
    }
  })

  const json = { 'Content-Type': 'application/json' }
  it.each([
    [
      'JSON from an older browser on another site (Origin, no Sec-Fetch-Site)',
      { ...json, Origin: 'https://evil.example' },
      403,
    ],
    ['JSON from an opaque origin (sandboxed iframe, data: URL)', { ...json, Origin: 'null' }, 403],
    ['JSON labelled cross-site', { ...json, 'Sec-Fetch-Site': 'cross-site', Origin: 'https://evil.example' }, 403],
    ['JSON labelled same-site (another port or subdomain)', { ...json, 'Sec-Fetch-Site': 'same-site' }, 403],
    ['text/plain from no page at all', { 'Content-Type': 'text/plain' }, 415],
    ['no Content-Type', {}, 415],
    ['JSON from a server (no Origin)', json, 200],
    ['JSON from its own page (same-origin)', { ...json, 'Sec-Fetch-Site': 'same-origin' }, 200],
  ] as const)('%s (%j) → %i', async (_what, headers, status) => {
    expect(await rawPost(origin, '/api/s3-upload', headers)).toBe(status)
  })

  it('JSON with Origin naming its own host and no Sec-Fetch-Site (an older browser, same origin) → 200', async () => {
    expect(await rawPost(origin, '/api/s3-upload', { ...json, Origin: origin })).toBe(200)
  })
})
