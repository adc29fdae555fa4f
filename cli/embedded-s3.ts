import { mkdir, mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises'
import type { Server } from 'node:http'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import S3rver from '@20minutes/s3rver'
import { LOCAL_STORE_KEY } from '../server/local-store.ts'

/** s3rver accepts only this key pair, and checks SigV4 signatures made with it. */
export const EMBEDDED_CREDENTIALS = { accessKeyId: LOCAL_STORE_KEY, secretAccessKey: LOCAL_STORE_KEY }
export const EMBEDDED_BUCKET = 'uploads'
export const EMBEDDED_REGION = 'us-east-1'

export interface EmbeddedS3Options {
  /** Where objects are kept. @default a fresh temporary folder, removed by `close()` */
  directory?: string
  /** A fixed port keeps object URLs the same across restarts (`npm start` uses 4568). @default 0: a free port */
  port?: number
  /** One line per event worth telling a person (an aborted multipart upload cleaned up). @default none */
  log?: (line: string) => void
}

export interface EmbeddedS3 {
  /** `http://127.0.0.1:PORT`; path-style URLs only (no virtual hosts on loopback). */
  endpoint: string
  region: string
  bucket: string
  credentials: { accessKeyId: string; secretAccessKey: string }
  directory: string
  close(): Promise<void>
}

/**
 * The page uploads to s3rver cross-origin, so the bucket's CORS rule allows any origin (s3rver
 * listens on loopback only), the methods of single and multipart uploads, any request header, and
 * exposes ETag: without it the page cannot read part ETags and multipart fails.
 */
const CORS = `<CORSConfiguration><CORSRule>
  <AllowedOrigin>*</AllowedOrigin>
  ${['GET', 'HEAD', 'PUT', 'POST', 'DELETE'].map((method) => `<AllowedMethod>${method}</AllowedMethod>`).join('')}
  <AllowedHeader>*</AllowedHeader>
  <ExposeHeader>ETag</ExposeHeader>
  <MaxAgeSeconds>3000</MaxAgeSeconds>
</CORSRule></CORSConfiguration>`

/**
 * `@20minutes/s3rver` on 127.0.0.1 with one bucket, created with its CORS rule up front (s3rver
 * has no PutBucketCors). Data from an earlier run in `directory` stays; the rule is re-applied.
 */
export async function startEmbeddedS3({
  directory,
  port = 0,
  log = () => {},
}: EmbeddedS3Options = {}): Promise<EmbeddedS3> {
  const temporary = directory === undefined
  const folder = directory ?? (await mkdtemp(join(tmpdir(), 'updraft-s3-')))
  await mkdir(folder, { recursive: true })
  const server = new S3rver({
    address: '127.0.0.1',
    port,
    silent: true,
    directory: folder,
    vhostBuckets: false,
    configureBuckets: [{ name: EMBEDDED_BUCKET, configs: [CORS] }],
  })
  // s3rver's listen() leaves a taken port to an unhandled 'error' event: a raw stack and exit.
  if (port !== 0)
    await ensurePortFree(port).catch(async (error: unknown) => {
      if (temporary) await rm(folder, { recursive: true, force: true })
      throw error
    })
  addAbortMultipartUpload(server, log)
  addListParts(server)
  refuseCopies(server)
  const address = await server.run().catch(async (error: unknown) => {
    if (temporary) await rm(folder, { recursive: true, force: true })
    throw error
  })
  return {
    endpoint: `http://127.0.0.1:${address.port}`,
    region: EMBEDDED_REGION,
    bucket: EMBEDDED_BUCKET,
    credentials: EMBEDDED_CREDENTIALS,
    directory: folder,
    async close() {
      // A browser keeps connections open (and an upload may be mid-way): close() would wait for them.
      ;(server as unknown as { httpServer?: Server }).httpServer?.closeAllConnections()
      await server.close()
      if (temporary) await rm(folder, { recursive: true, force: true })
    },
  }
}

/** The parts of s3rver 4.x this file reaches into: its Koa middleware list and its filesystem store. */
interface S3rverInternals {
  middleware: Array<(ctx: KoaContext, next: () => Promise<void>) => Promise<void>>
  store: { getResourcePath(bucket: string, key: undefined, resource: string): string }
}
interface KoaContext {
  method: string
  headers: Record<string, string | string[] | undefined>
  path: string
  query: Record<string, string | string[] | undefined>
  status: number
  body: unknown
  type: string
}

const UPLOAD_ID = /^[0-9a-f]{32}$/

/**
 * s3rver 4.x has no AbortMultipartUpload (it answers 405 MethodNotAllowed), so aborting on the
 * demo page left parts on disk and made the upload API's /abort a 500. This adds it, the way S3
 * answers it (204, or 404 NoSuchUpload).
 */
function addAbortMultipartUpload(server: S3rver, log: (line: string) => void): void {
  addUploadRoute(server, 'DELETE', async (ctx, { key, folder }) => {
    const parts = (await readdir(folder)).filter((name) => /^\d+$/.test(name)).length
    await rm(folder, { recursive: true, force: true })
    log(
      `Aborted the multipart upload of ${key}: removed ${parts} part${parts === 1 ? '' : 's'} from the embedded store`,
    )
    ctx.status = 204
    ctx.body = null
  })
}

/**
 * s3rver 4.x has no ListParts either (405 too), so the demo could not resume an upload after a
 * reload. This answers it the way S3 does, from s3rver's own part files (`{n}` and `{n}.md5`).
 * One page holds every part: the demo's files stay far below 1000 parts.
 */
function addListParts(server: S3rver): void {
  addUploadRoute(server, 'GET', async (ctx, { bucket, folder }) => {
    const numbers = (await readdir(folder))
      .filter((name) => /^\d+$/.test(name))
      .map(Number)
      .sort((a, b) => a - b)
    const parts = await Promise.all(
      numbers.map(async (n) => {
        // A part whose body never arrived whole (the page went mid-part) has no .md5: not stored.
        const md5 = await readFile(join(folder, `${n}.md5`), 'utf8').catch(() => undefined)
        if (md5 === undefined) return ''
        const { size } = await stat(join(folder, String(n)))
        return `<Part><PartNumber>${n}</PartNumber><ETag>&quot;${md5.trim()}&quot;</ETag><Size>${size}</Size></Part>`
      }),
    )
    ctx.status = 200
    ctx.type = 'application/xml'
    ctx.body = `<?xml version="1.0" encoding="UTF-8"?>\n<ListPartsResult><Bucket>${bucket}</Bucket><UploadId>${ctx.query.uploadId}</UploadId><IsTruncated>false</IsTruncated>${parts.join('')}</ListPartsResult>`
  })
}

/**
 * s3rver checks no permission at all and honours no copy precondition: a page adding
 * `x-amz-copy-source` to a presigned URL had any object of the store copied into its key
 * (docs/security.md, "No copy through a presigned URL"). Nothing the demo does copies, so every
 * CopyObject and UploadPartCopy is refused, after the signature check, as S3 refuses what a
 * caller may not do.
 */
function refuseCopies(server: S3rver): void {
  const internals = server as unknown as S3rverInternals
  const refuse = async (ctx: KoaContext, next: () => Promise<void>) => {
    if (ctx.headers['x-amz-copy-source'] === undefined) return next()
    ctx.status = 403
    ctx.type = 'application/xml'
    ctx.body =
      '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code><Message>The embedded store makes no server-side copies: nothing in the demo asks for one.</Message></Error>'
  }
  internals.middleware.splice(internals.middleware.length - 1, 0, refuse)
}

interface NamedUpload {
  bucket: string
  key: string
  /** s3rver's folder of the upload: its `key`, `metadata`, and part files. */
  folder: string
}

/**
 * Answers `method` with `uploadId` on an object path, a request s3rver refuses (405) only after it
 * has checked the request's signature and bucket, for the upload's own key only (else 404
 * NoSuchUpload, as S3). Its middleware list is composed when the server starts, so a handler put
 * in front of the router here sees every request.
 */
function addUploadRoute(
  server: S3rver,
  method: string,
  answer: (ctx: KoaContext, upload: NamedUpload) => Promise<void>,
): void {
  const internals = server as unknown as S3rverInternals
  const route = async (ctx: KoaContext, next: () => Promise<void>) => {
    try {
      await next()
    } catch (error) {
      const uploadId = ctx.query.uploadId
      if (
        ctx.method !== method ||
        typeof uploadId !== 'string' ||
        (error as { code?: string }).code !== 'MethodNotAllowed'
      )
        throw error
      const [, bucket = '', ...keyPath] = ctx.path.split('/')
      const key = decodeURIComponent(keyPath.join('/'))
      const folder = join(internals.store.getResourcePath(bucket, undefined, 'uploads'), uploadId)
      const stored = UPLOAD_ID.test(uploadId)
        ? await readFile(join(folder, 'key'), 'utf8').catch(() => undefined)
        : undefined
      if (stored === key) return answer(ctx, { bucket, key, folder })
      ctx.status = 404
      ctx.type = 'application/xml'
      ctx.body =
        '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>NoSuchUpload</Code><Message>The specified upload does not exist.</Message></Error>'
    }
  }
  internals.middleware.splice(internals.middleware.length - 1, 0, route)
}

/** Rejects with Node's own EADDRINUSE error (its `code` and `port`) when 127.0.0.1:`port` is taken. */
function ensurePortFree(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const probe = createServer()
    probe.once('error', reject)
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve()))
  })
}
