// Issue 34, item 3: the stall watchdog counted the time a request waited inside the browser for
// one of its 6 connections per host, so with many uploads at once requests queued there were
// declared stalled and sent again (604 of 1000 small files at 150 ms RTT). The engine now keeps
// its own per-origin limit of requests in flight (`transport.connections`), and the watchdog
// starts once a request can be sent.
import { describe, expect, it } from 'vitest'
import { NetworkError, UploadAbortedError } from '../../engine/core/errors.ts'
import type { HttpRequest, HttpResponse, Transport } from '../../engine/core/http.ts'
import { createRun } from '../../engine/core/run.ts'
import { postToApi } from '../../engine/transport/api.ts'
import { settle, stepThroughTransport } from '../helpers/fake-transport.ts'

const STALL = 60

/**
 * A browser in front of the step-through transport: at most 6 requests per origin go out, the
 * rest wait inside it (no byte moves for them) until one ends, as Chromium queues them.
 * `sent` counts each request the page makes (XHR's send), so a request sent twice shows.
 */
function browserLike(connections = 6) {
  const fake = stepThroughTransport()
  const open = new Map<string, number>()
  const queued: Array<() => void> = []
  const sent = new Map<string, number>()
  let mostOpen = 0
  const transport: Transport = (request: HttpRequest) =>
    new Promise<HttpResponse>((resolve, reject) => {
      sent.set(String(request.body), (sent.get(String(request.body)) ?? 0) + 1)
      const host = new URL(request.url).origin
      const go = () => {
        open.set(host, (open.get(host) ?? 0) + 1)
        mostOpen = Math.max(mostOpen, open.get(host)!)
        fake
          .transport(request)
          .then(resolve, reject)
          .finally(() => {
            open.set(host, open.get(host)! - 1)
            queued.shift()?.()
          })
      }
      if ((open.get(host) ?? 0) < connections) go()
      else {
        queued.push(go)
        // A request cancelled while queued never leaves the browser.
        request.signal?.addEventListener('abort', () => {
          const at = queued.indexOf(go)
          if (at >= 0) queued.splice(at, 1)
          reject(new UploadAbortedError())
        })
      }
    })
  transport.connections = connections
  return { fake, transport, sent, mostOpen: () => mostOpen }
}

const post = (run: ReturnType<typeof createRun>, name: string, signal?: AbortSignal) =>
  postToApi<{ ok: boolean }>(run, `/${name}`, { name }, signal)

describe('requests per origin', () => {
  // Load-proof: the only wait is the one under test, and a longer one (a loaded machine) only
  // tests more. Six requests of an upload whose stall timeout is a minute hold the connections;
  // once they are answered, the two waiting get theirs and are answered in the same turn of the
  // event loop, so no watchdog timer can fire in between.
  it('regression: requests waiting inside the browser for a connection were declared stalled and sent again; now they wait in the engine and go once', async () => {
    const browser = browserLike()
    const holding = createRun({
      api: 'https://app.test/api/s3-upload',
      transport: browser.transport,
      stallTimeout: 60_000,
    })
    const held = Array.from({ length: 6 }, (_, i) => post(holding, `held-${i}`))
    await browser.fake.waitForPending(6)
    const run = createRun({
      api: 'https://app.test/api/s3-upload',
      transport: browser.transport,
      stallTimeout: STALL,
      retry: { delay: 1 },
    })
    const waiting = Promise.allSettled([post(run, 'waiting-0'), post(run, 'waiting-1')])
    // Five of its stall timeouts behind the six.
    await settle(5 * STALL)
    expect(browser.fake.pending).toHaveLength(6)
    for (const request of browser.fake.pending.slice()) request.respond(200, {}, '{"ok":true}')
    for (const request of await browser.fake.waitForPending(2)) request.respond(200, {}, '{"ok":true}')
    expect(await Promise.all(held)).toHaveLength(6)
    expect((await waiting).map((reply) => reply.status)).toEqual(['fulfilled', 'fulfilled'])
    expect(browser.mostOpen()).toBe(6)
    expect([...browser.sent.values()].filter((times) => times > 1)).toEqual([])
    expect(browser.sent.size).toBe(8)
  })

  it('each origin has its own connections: storage requests do not wait behind the API’s', async () => {
    const { fake } = browserLike()
    const transport: Transport = (request) => fake.transport(request)
    transport.connections = 2
    const run = createRun({ api: 'https://app.test/api/s3-upload', transport, stallTimeout: 10_000 })
    const api = [post(run, 'a'), post(run, 'b'), post(run, 'c')]
    const storage = createRun({ api: 'https://store.test/bucket', transport, stallTimeout: 10_000 })
    const put = post(storage, 'd')
    const pending = await fake.waitForPending(3)
    expect(pending.map((request) => new URL(request.url).host).sort()).toEqual(['app.test', 'app.test', 'store.test'])
    for (const request of fake.pending.slice()) request.respond(200, {}, '{"ok":true}')
    ;(await fake.waitForPending(1))[0]!.respond(200, {}, '{"ok":true}')
    await Promise.all([...api, put])
  })

  it('a request aborted while it waits for a connection settles at once and is never sent', async () => {
    const browser = browserLike(1)
    const run = createRun({ api: 'https://app.test/api/s3-upload', transport: browser.transport, stallTimeout: 10_000 })
    const first = post(run, 'first')
    const controller = new AbortController()
    const second = post(run, 'second', controller.signal)
    await browser.fake.waitForPending(1)
    controller.abort()
    await expect(second).rejects.toBeInstanceOf(UploadAbortedError)
    browser.fake.pending[0]!.respond(200, {}, '{"ok":true}')
    await first
    // Its turn came and went: the connection was handed on, nothing was sent for it.
    const third = post(run, 'third')
    ;(await browser.fake.waitForPending(1))[0]!.respond(200, {}, '{"ok":true}')
    await third
    expect([...browser.sent.keys()]).toEqual(['{"name":"first"}', '{"name":"third"}'])
  })

  it('a request that does get its connection and then stalls is still cancelled after stallTimeout', async () => {
    const browser = browserLike()
    const run = createRun({
      api: 'https://app.test/api/s3-upload',
      transport: browser.transport,
      stallTimeout: STALL,
      retry: { limit: 0 },
    })
    await expect(post(run, 'silent')).rejects.toBeInstanceOf(NetworkError)
  })
})
