// Issue 14's browser use case for bodies that are not Blobs: a MediaRecorder recording a canvas
// in real Chromium, its chunks fed to a ReadableStream that uploads while the recording goes on
// (length unknown until the recorder stops). Read back from Ceph RGW and compared with the bytes
// the page recorded. Over one part: uploadObject (the engine runs the multipart upload itself);
// within one part: upload() through the upload API, which then knows the length.
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { type ChromiumSession, launchChromium } from '../dev/launch-chromium.ts'
import { readObject, sdkClient, sha256 } from '../dev/s3-client.ts'
import { type ServedHandler, serveHandler } from '../dev/serve-handler.ts'
import { storeConfig } from '../dev/stores.ts'
import { createUploadHandler } from '../server/index.ts'
import { bundleEngine } from './helpers/engine-bundle.ts'
import { type StaticServer, startStaticServer } from './helpers/static-server.ts'

const MiB = 1024 * 1024
const rgw = inject('rgw')
const reader = sdkClient(rgw)
let site: StaticServer
let served: ServedHandler
let chromium: ChromiumSession
let page: Page

const PAGE_HTML = `<!doctype html><meta charset="utf-8"><title>updraft recorder</title>
<script type="module">import * as updraft from '/engine.js'; window.updraft = updraft</script>`

beforeAll(async () => {
  const bundle = await bundleEngine()
  site = await startStaticServer({
    '/': { type: 'text/html; charset=utf-8', body: PAGE_HTML },
    '/engine.js': { type: 'text/javascript; charset=utf-8', body: bundle.code },
  })
  served = await serveHandler(
    createUploadHandler(storeConfig(rgw, { allowedOrigins: [site.origin], logger: { error() {}, warn() {} } })),
  )
  chromium = await launchChromium()
  page = await chromium.newPage()
  await page.goto(`${site.origin}/`)
  await page.waitForFunction(() => 'updraft' in window)
})

afterAll(async () => {
  await chromium?.close()
  await served?.close()
  await site?.close()
  reader.destroy()
})

type Engine = typeof import('../engine/index.ts')
declare const window: Window & { updraft: Engine }

interface Recorded {
  error?: string
  key: string
  size: number
  sha256: string
  progress: Array<{ loaded: number; total: number }>
}

/**
 * Records a canvas of noise (incompressible: the recorder makes bytes fast) until `minBytes` are
 * recorded, uploading the chunks as they come through `how` ('object': uploadObject straight to
 * RGW; 'api': upload() through the upload API, presigned).
 */
function recordAndUpload(how: 'object' | 'api', minBytes: number): Promise<Recorded> {
  const target = {
    bucket: rgw.bucket,
    region: rgw.region,
    endpoint: rgw.endpoint,
    forcePathStyle: true,
    credentials: rgw.credentials,
  }
  return page.evaluate(
    async ({ how, minBytes, target, apiUrl }) => {
      const canvas = document.createElement('canvas')
      canvas.width = 320
      canvas.height = 240
      const context = canvas.getContext('2d')!
      const frame = context.createImageData(canvas.width, canvas.height)
      const draw = () => {
        for (let at = 0; at < frame.data.length; at += 65536)
          crypto.getRandomValues(frame.data.subarray(at, at + 65536))
        context.putImageData(frame, 0, 0)
      }
      draw()
      const painter = setInterval(draw, 33)
      const recorder = new MediaRecorder(canvas.captureStream(30), {
        mimeType: 'video/webm',
        videoBitsPerSecond: 25_000_000,
      })
      const recorded: Uint8Array[] = []
      let bytes = 0
      // Blob.arrayBuffer() settles in any order: chained, so chunks enter the stream in order.
      let queue = Promise.resolve()
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          recorder.ondataavailable = (event) => {
            queue = queue.then(async () => {
              const chunk = new Uint8Array(await event.data.arrayBuffer())
              recorded.push(chunk)
              bytes += chunk.length
              if (bytes >= minBytes && recorder.state === 'recording') recorder.stop()
              controller.enqueue(chunk)
            })
          }
          recorder.onstop = () => void queue.then(() => controller.close())
        },
      })
      recorder.start(100)
      // A bound on the recording, whatever the encoder's pace.
      const stopAnyway = setTimeout(() => recorder.state === 'recording' && recorder.stop(), 30_000)
      const key = `recordings/${how}-${crypto.randomUUID()}.webm`
      const progress: Array<{ loaded: number; total: number }> = []
      const onProgress = (p: { loaded: number; total: number }) => void progress.push(p)
      let error: string | undefined
      let storedKey = key
      try {
        if (how === 'object')
          await window.updraft.uploadObject(stream, { ...target, key, contentType: 'video/webm', onProgress })
        else {
          const result = await window.updraft.upload(stream, {
            api: apiUrl,
            strategy: 'presigned',
            filename: 'clip.webm',
            contentType: 'video/webm',
            onProgress,
          })
          storedKey = result.key
        }
      } catch (caught) {
        error = String(caught)
      } finally {
        clearInterval(painter)
        clearTimeout(stopAnyway)
      }
      const all = new Uint8Array(bytes)
      let at = 0
      for (const chunk of recorded) all.set(chunk, (at += chunk.length) - chunk.length)
      const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', all))
      return {
        error,
        key: storedKey,
        size: bytes,
        sha256: [...digest].map((b) => b.toString(16).padStart(2, '0')).join(''),
        progress,
      }
    },
    { how, minBytes, target, apiUrl: `${served.api}` },
  )
}

describe('bytes in Chromium', () => {
  it('a Uint8Array view goes over XHR as its own bytes, multipart, byte-exact', async () => {
    const key = `bytes/${crypto.randomUUID()}.bin`
    const target = {
      bucket: rgw.bucket,
      region: rgw.region,
      endpoint: rgw.endpoint,
      forcePathStyle: true,
      credentials: rgw.credentials,
      key,
    }
    const expected = await page.evaluate(async (target) => {
      const backing = new Uint8Array(12 * 1024 * 1024 + 100)
      for (let at = 0; at < backing.length; at += 65536) crypto.getRandomValues(backing.subarray(at, at + 65536))
      const view = backing.subarray(50, backing.length - 50)
      await window.updraft.uploadObject(view, target)
      const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', view))
      return [...digest].map((b) => b.toString(16).padStart(2, '0')).join('')
    }, target)
    expect(sha256(await readObject(reader, rgw.bucket, key))).toBe(expected)
  })
})

describe('a MediaRecorder stream in Chromium', () => {
  it('over one part: uploadObject sends it multipart while it records, read back byte-exact', async () => {
    const run = await recordAndUpload('object', 6 * MiB)
    expect(run.error).toBeUndefined()
    expect(run.size).toBeGreaterThan(5 * MiB)
    const stored = await readObject(reader, rgw.bucket, run.key)
    expect(stored.length).toBe(run.size)
    expect(sha256(stored)).toBe(run.sha256)
    expect([...stored.subarray(0, 4)]).toEqual([0x1a, 0x45, 0xdf, 0xa3]) // WebM (EBML)
    // The total grew as the recording did, and ended at its size.
    expect(run.progress[0]!.total).toBeLessThan(run.size)
    expect(run.progress.at(-1)).toEqual({ loaded: run.size, total: run.size })
  }, 60_000)

  it('within one part: upload() through the upload API, one PUT, read back byte-exact', async () => {
    const run = await recordAndUpload('api', 256 * 1024)
    expect(run.error).toBeUndefined()
    const stored = await readObject(reader, rgw.bucket, run.key)
    expect(sha256(stored)).toBe(run.sha256)
    expect(run.progress.at(-1)).toEqual({ loaded: run.size, total: run.size })
  }, 60_000)
})
