import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export type WebHandler = (request: Request) => Promise<Response>

export interface ServedHandler {
  /** `http://127.0.0.1:PORT/api/s3-upload`: an absolute upload API URL for `upload()`. */
  api: string
  origin: string
  close(): Promise<void>
}

// Hop-by-hop headers describe the connection, not the request (as server/fastify.ts skips them).
const SKIPPED = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'host'])

/**
 * Serves a Web-standard `(Request) => Response` handler over node:http on a free loopback port.
 * Every path reaches the handler, as a catch-all route would: the handler itself tells `/parts`,
 * `/complete` and `/abort` from the upload request by the last path segment.
 */
/** `port`: on loopback. @default a free one */
export async function serveHandler(handler: WebHandler, path = '/api/s3-upload', port = 0): Promise<ServedHandler> {
  const server = createServer((incoming, outgoing) => {
    toWebRequest(incoming)
      .then(handler)
      .then((response) => send(response, outgoing))
      .catch((error: unknown) => {
        // The handler answers every failure itself; reaching this is a bug the test should see.
        console.error('serveHandler: the handler threw', error)
        outgoing.writeHead(502, { 'content-type': 'text/plain' }).end('handler threw')
      })
  })
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    origin,
    api: origin + path,
    close: () =>
      new Promise<void>((resolve, reject) => {
        // fetch keeps connections alive; without this close() waits for them to time out.
        server.closeAllConnections()
        server.close((error) => (error ? reject(error) : resolve()))
      }),
  }
}

async function toWebRequest(incoming: IncomingMessage): Promise<Request> {
  const chunks: Buffer[] = []
  for await (const chunk of incoming) chunks.push(chunk as Buffer)
  const headers = new Headers()
  for (const [name, value] of Object.entries(incoming.headers)) {
    if (value === undefined || SKIPPED.has(name)) continue
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item)
  }
  const method = incoming.method ?? 'GET'
  return new Request(`http://${incoming.headers.host ?? '127.0.0.1'}${incoming.url ?? '/'}`, {
    method,
    headers,
    body: method === 'GET' || method === 'HEAD' ? undefined : Buffer.concat(chunks),
  })
}

async function send(response: Response, outgoing: ServerResponse) {
  const body = Buffer.from(await response.arrayBuffer())
  outgoing.writeHead(response.status, Object.fromEntries(response.headers)).end(body)
}

export interface ApiCall {
  /** `''` for the upload request, else `/parts`, `/complete`, `/abort`. */
  route: string
  body: Record<string, unknown>
  status: number
  reply: unknown
}

/**
 * Wraps a handler so a test can see what the engine asked the upload API and what it was told,
 * in order. `prefix` is cut from the path to name the route.
 */
export function recordCalls(handler: WebHandler, prefix = '/api/s3-upload') {
  const calls: ApiCall[] = []
  const recorded: WebHandler = async (request) => {
    const body = (await request
      .clone()
      .json()
      .catch(() => ({}))) as Record<string, unknown>
    const response = await handler(request)
    const text = await response.clone().text()
    let reply: unknown = text
    try {
      reply = JSON.parse(text)
    } catch {
      // plain-text 500: keep the text
    }
    const route = new URL(request.url).pathname.slice(prefix.length)
    calls.push({ route, body, status: response.status, reply })
    return response
  }
  return { handler: recorded, calls }
}
