// Fastify serves the page (built by `npm run build` into dist/) and the upload API.
// The upload API reads S3_UPLOAD_KEY, S3_UPLOAD_SECRET, S3_UPLOAD_BUCKET, S3_UPLOAD_REGION and, for
// R2, MinIO, Ceph or B2, S3_UPLOAD_ENDPOINT (+ S3_UPLOAD_FORCE_PATH_STYLE=true).
import { readFile } from 'node:fs/promises'
import { extname, join, normalize } from 'node:path'
import Fastify from 'fastify'
import s3Upload from 'updraft-s3/fastify'

const app = Fastify({ logger: true })

await app.register(s3Upload, {
  prefix: '/api/s3-upload',
  maxFileSize: 100 * 1024 * 1024,
  // Who may upload: a Web Request comes in; return false to answer 403 before anything is signed.
  // authorize: (request) => isSignedIn(request.headers.get('cookie')),
})

// The built page. A static-file plugin (@fastify/static) does the same.
const dist = join(import.meta.dirname, 'dist')
/** @type {Record<string, string>} */
const types = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript',
  '.css': 'text/css',
  '.svg': 'image/svg+xml',
}
app.get('/*', async (request, reply) => {
  const path = normalize(decodeURIComponent(new URL(request.url, 'http://page').pathname))
  const file = join(dist, path === '/' ? 'index.html' : path)
  const body = file.startsWith(dist) ? await readFile(file).catch(() => undefined) : undefined
  if (!body) return reply.code(404).send()
  return reply.type(types[extname(file)] ?? 'application/octet-stream').send(body)
})

await app.listen({ port: Number(process.env.PORT ?? 3000), host: process.env.HOST ?? 'localhost' })
