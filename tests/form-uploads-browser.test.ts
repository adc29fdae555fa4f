// S3 POST forms from a page (issue 34), in Chromium and Firefox ESR: `useS3Upload` with its
// defaults against an upload API with `formUploads` on Ceph RGW. Every form goes to the bucket's one
// URL, so the browser's preflight cache serves the files after the first few (those sent before any
// preflight was answered); every PUT URL is a URL of its own, so each PUT has its own preflight.
// Storage is reached through a counting proxy, which sees each preflight and upload the page sends.
// Every object is read back byte for byte.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { BROWSER_LABELS, BROWSERS } from '../dev/browsers.ts'
import { startCountingProxy } from '../dev/counting-proxy.ts'
import { readObject, sdkClient, sha256, testBytes } from '../dev/s3-client.ts'
import { type ServedHandler, serveHandler } from '../dev/serve-handler.ts'
import { storeConfig } from '../dev/stores.ts'
import { createUploadHandler } from '../server/index.ts'
import { bundleForBrowser } from './helpers/engine-bundle.ts'
import { type EnginePageIn, openEnginePageIn } from './helpers/engine-page.ts'

const FILES = 24
/** File i's size: 2-10 KiB, each its own. */
const sizeOf = (i: number) => 2048 + ((i * 1531) % 8192)

const rgw = inject('rgw')
const client = sdkClient(rgw)
let proxy: Awaited<ReturnType<typeof startCountingProxy>>
const served: ServedHandler[] = []

beforeAll(async () => {
  proxy = await startCountingProxy(rgw.endpoint)
})
afterAll(async () => {
  await Promise.all(served.map((server) => server.close()))
  await proxy?.stop()
  client.destroy()
})

/** The hook with its defaults, in the page: `addFiles` of FILES files, each made by `testBytes(size, seed)`. */
const hookPage = () =>
  bundleForBrowser({
    react: true,
    contents: `
      import { createElement as h, useEffect } from 'react'
      import { createRoot } from 'react-dom/client'
      import { useS3Upload } from './src/useS3Upload.ts'
      export function uploadWithHook(api, sizes) {
        return new Promise((resolve) => {
          function App() {
            const { addFiles } = useS3Upload({ api })
            useEffect(() => {
              const files = sizes.map((size, i) => new File([window.testBytes(size, i + 1)], 'file-' + i + '.bin', { type: 'application/octet-stream' }))
              addFiles(files).then((outcomes) =>
                resolve(outcomes.map((o) => (o.status === 'fulfilled' ? { key: o.value.key } : { error: String(o.reason) }))),
              )
            }, [])
            return null
          }
          const root = document.createElement('div')
          document.body.append(root)
          createRoot(root).render(h(App))
        })
      }`,
  })

describe.each(BROWSERS)('in %s', (browser) => {
  let engine: EnginePageIn
  beforeAll(async () => {
    engine = await openEnginePageIn(browser, hookPage())
  })
  afterAll(() => engine?.close())

  /** The upload API on RGW (reached through the proxy), `formUploads` as given; FILES files through the hook; what the proxy saw. */
  async function uploadThrough(formUploads: boolean) {
    const server = await serveHandler(
      createUploadHandler(
        storeConfig(
          { ...rgw, endpoint: proxy.endpoint },
          { formUploads, allowedOrigins: [engine.origin], logger: { error: () => {}, warn: () => {} } },
        ),
      ),
    )
    served.push(server)
    const sizes = Array.from({ length: FILES }, (_, i) => sizeOf(i))
    proxy.log.length = 0
    const outcomes = await engine.page.evaluate(
      ({ api, sizes }) =>
        (
          window as unknown as {
            updraft: { uploadWithHook(api: string, sizes: number[]): Promise<Array<{ key?: string; error?: string }>> }
          }
        ).updraft.uploadWithHook(api, sizes),
      { api: server.api, sizes },
    )
    const count = (method: string) => proxy.log.filter((entry) => entry.method === method).length
    for (const [i, outcome] of outcomes.entries()) {
      expect(outcome.error).toBeUndefined()
      expect(sha256(await readObject(client, rgw.bucket, outcome.key!))).toBe(sha256(testBytes(sizes[i]!, i + 1)))
    }
    return { preflights: count('OPTIONS'), posts: count('POST'), puts: count('PUT') }
  }

  it(`${BROWSER_LABELS[browser]}: useS3Upload's defaults POST each file as a form, with fewer preflights than files; PUT URLs need one each`, async () => {
    const forms = await uploadThrough(true)
    // The server's check of the store (four forms from Node) goes through the proxy too: not the page's.
    expect(forms.puts).toBe(0)
    expect(forms.posts).toBe(FILES + 4)
    expect(forms.preflights).toBeGreaterThanOrEqual(1)
    expect(forms.preflights).toBeLessThan(FILES)
    const puts = await uploadThrough(false)
    expect(puts.posts).toBe(0)
    expect(puts.puts).toBe(FILES)
    expect(puts.preflights).toBe(FILES)
    console.info(`${browser}: ${FILES} files, ${forms.preflights} preflights by form, ${puts.preflights} by PUT`)
  })
})
