import { createHash, randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { createServer as createTlsServer } from 'node:https'
import type { AddressInfo } from 'node:net'

/**
 * An S3 stand-in that stores nothing: bodies are read and dropped, and every call gets the
 * smallest reply a client accepts (S3's XML shapes, quoted ETags). It measures the client, not a
 * store. CORS is open and exposes ETag, so a page on another origin can use it too. It keeps each
 * object's size and type (not its bytes), so the upload API's `/complete` can HEAD what was uploaded.
 * https://docs.aws.amazon.com/AmazonS3/latest/API/API_CreateMultipartUpload.html
 */
export interface NullSink {
  /** http://127.0.0.1:PORT (https:// with `tls`); path-style, any bucket, any credentials. */
  endpoint: string
  /** Body bytes received so far, over every request. */
  readonly bytes: number
  /** Most body requests (PUTs) in flight at once since the last reset. */
  readonly peakConcurrency: number
  reset(): void
  stop(): Promise<void>
}

const CORS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, PUT, POST, DELETE, HEAD',
  'access-control-expose-headers': 'ETag, x-amz-request-id',
  'access-control-max-age': '3000',
}

/** `tls`: serve HTTPS with this key and certificate (bench/lib/tls-cert.ts makes a self-signed one). */
export async function startNullSink({ tls }: { tls?: { key: string; cert: string } } = {}): Promise<NullSink> {
  let bytes = 0
  let inFlight = 0
  let peak = 0
  /** What HEAD answers: key → size, type, when; and the parts of open multipart uploads. */
  const objects = new Map<string, { size: number; type: string; at: string }>()
  const uploads = new Map<string, { type: string; parts: Map<string, number> }>()

  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url ?? '/', 'http://sink')
    const query = url.searchParams
    if (request.method === 'OPTIONS') {
      response.writeHead(200, {
        ...CORS,
        'access-control-allow-headers': request.headers['access-control-request-headers'] ?? '*',
      })
      return response.end()
    }
    const isBody = request.method === 'PUT'
    if (isBody) peak = Math.max(peak, ++inFlight)
    let received = 0
    // Complete's body is kept (a few KB) for its ETags; parts' bodies are only counted.
    let completeXml = ''
    try {
      for await (const chunk of request) {
        received += (chunk as Buffer).length
        if (request.method === 'POST') completeXml += String(chunk)
      }
    } finally {
      if (isBody) inFlight--
    }
    bytes += received
    const key = url.pathname.split('/').slice(2).join('/')
    const type = request.headers['content-type'] ?? 'binary/octet-stream'
    const uploadId = query.get('uploadId') ?? ''
    if (request.method === 'POST' && query.has('uploads')) {
      const id = randomBytes(8).toString('hex')
      uploads.set(id, { type, parts: new Map() })
      return xml(
        response,
        `<InitiateMultipartUploadResult><Bucket>b</Bucket><Key>${key}</Key><UploadId>${id}</UploadId></InitiateMultipartUploadResult>`,
      )
    }
    if (request.method === 'POST' && uploadId) {
      const upload = uploads.get(uploadId)
      uploads.delete(uploadId)
      const size = [...(upload?.parts.values() ?? [])].reduce((sum, part) => sum + part, 0)
      objects.set(key, { size, type: upload?.type ?? type, at: new Date().toUTCString() })
      return xml(
        response,
        `<CompleteMultipartUploadResult><Location>${url.href}</Location><Bucket>b</Bucket><Key>${key}</Key><ETag>&quot;${multipartETag(completeXml)}&quot;</ETag></CompleteMultipartUploadResult>`,
      )
    }
    if (request.method === 'DELETE') {
      if (uploadId) uploads.delete(uploadId)
      else objects.delete(key)
      return response.writeHead(204, CORS).end()
    }
    if (request.method === 'HEAD') {
      const object = objects.get(key)
      if (!object) return response.writeHead(404, CORS).end()
      const headers = {
        'content-length': object.size,
        'content-type': object.type,
        'last-modified': object.at,
        etag: `"${etagOf(object.size)}"`,
      }
      return response.writeHead(200, { ...CORS, ...headers }).end()
    }
    if (isBody && uploadId) uploads.get(uploadId)?.parts.set(query.get('partNumber') ?? '', received)
    else if (isBody) objects.set(key, { size: received, type, at: new Date().toUTCString() })
    // A body sent with Content-MD5 gets that MD5 as its ETag, as S3 answers (the checksum benchmark rows).
    const md5 = request.headers['content-md5']
    const etag = typeof md5 === 'string' ? Buffer.from(md5, 'base64').toString('hex') : etagOf(received)
    if (isBody) return response.writeHead(200, { ...CORS, etag: `"${etag}"`, 'content-length': '0' }).end()
    response.writeHead(200, { ...CORS, 'content-length': '0' }).end()
  }

  const listener = (request: IncomingMessage, response: ServerResponse) => {
    handle(request, response).catch(() => response.destroy())
  }
  const server = tls
    ? createTlsServer({ keepAliveTimeout: 30_000, ...tls }, listener)
    : createServer({ keepAliveTimeout: 30_000 }, listener)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    endpoint: `${tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    get bytes() {
      return bytes
    },
    get peakConcurrency() {
      return peak
    },
    reset() {
      bytes = 0
      peak = 0
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/** 32 hex digits, like an MD5 ETag; the sink never hashes (that would measure the sink). */
const etagOf = (size: number) => size.toString(16).padStart(32, '0')

/** S3's multipart ETag: the MD5 of the parts' binary MD5s, then `-N` (a few bytes hashed: the sink's cost stays nil). */
function multipartETag(completeXml: string): string {
  const etags = [...completeXml.matchAll(/<ETag>(?:&quot;|")?([0-9a-f]{32})(?:&quot;|")?<\/ETag>/g)].map(
    (match) => match[1]!,
  )
  return `${createHash('md5')
    .update(Buffer.from(etags.join(''), 'hex'))
    .digest('hex')}-${etags.length}`
}

function xml(response: ServerResponse, body: string) {
  const text = `<?xml version="1.0" encoding="UTF-8"?>\n${body}`
  response.writeHead(200, { ...CORS, 'content-type': 'application/xml', 'content-length': Buffer.byteLength(text) })
  response.end(text)
}
