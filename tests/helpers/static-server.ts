import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface StaticFile {
  body: string | Uint8Array
  /** e.g. `text/html; charset=utf-8`, `text/javascript` (module scripts need a JS type). */
  type: string
}

export interface StaticServer {
  /** `http://127.0.0.1:PORT`: another port than the store's, so uploads from it are cross-origin. */
  origin: string
  close(): Promise<void>
}

/** Serves a fixed map of paths (`/`, `/engine.js`) from memory on a free loopback port; 404 otherwise. */
export async function startStaticServer(files: Record<string, StaticFile>): Promise<StaticServer> {
  const server = createServer((request, response) => {
    const file = files[new URL(request.url ?? '/', 'http://x').pathname]
    if (!file || (request.method !== 'GET' && request.method !== 'HEAD')) {
      response.writeHead(404).end()
      return
    }
    response.writeHead(200, { 'content-type': file.type, 'cache-control': 'no-store' }).end(file.body)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        // Chromium keeps connections alive; without this, close() waits for them to time out.
        server.closeAllConnections()
        server.close((error) => (error ? reject(error) : resolve()))
      }),
  }
}
